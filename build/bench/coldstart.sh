#!/usr/bin/env bash
# build/bench/coldstart.sh ROUNDS A.wasm [B.wasm …] — the worker's first request
# in workerd, modules alternating: for each round and each module, put the
# module in build/out/worker/app.wasm (build/worker.sh first, for the rest of
# the worker), start `wrangler dev --local` on a fresh migrated D1 database,
# time GET / (the isolate's first request: instantiating the module and Go's
# package init, then the handler's wiring) and the request after it, and stop
# wrangler. Leaves the last module in build/out/worker/: run build/worker.sh
# again afterwards. Each line ends with the load average at that start and
# what the worker logged of its start (the shim's instantiate and Go start,
# Go's handler wiring and answer: worker/log.go). The migrations run once, on
# a template database copied for each start.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
rounds=$1
shift
export WRANGLER_SEND_METRICS=false WRANGLER_HIDE_BANNER=true CLOUDFLARE_CF_FETCH_ENABLED=false
wrangler=node_modules/.bin/wrangler
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$wrangler" d1 migrations apply DB --local --persist-to "$scratch/template" >/dev/null 2>&1
for _ in $(seq "$rounds"); do
	for wasm in "$@"; do
		[ "$wasm" -ef build/out/worker/app.wasm ] || cp -f "$wasm" build/out/worker/app.wasm
		persist=$(mktemp -d "$scratch/d1.XXXX")
		cp -r "$scratch/template/." "$persist/"
		port=$((28000 + RANDOM % 1000))
		log=$scratch/wrangler.log
		"$wrangler" dev --local --ip 127.0.0.1 --port $port --inspector-port $((port + 1000)) --persist-to "$persist" \
			--show-interactive-dev-session=false --var ROWCALL_OWNER_KEY:rk_bench \
			--var ROWCALL_RECEIPT_KEY:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= --var ROWCALL_NO_EXAMPLES:1 >"$log" 2>&1 &
		pid=$!
		until grep -q 'Ready on' "$log"; do sleep 0.02; done
		first=$(curl -s -o /dev/null -w '%{time_total}s' "http://127.0.0.1:$port/") || first=failed
		next=$(curl -s -m 60 -o /dev/null -w '%{time_total}s' -H 'x-terminal-key: rk_bench' "http://127.0.0.1:$port/api/directory") || next=failed
		load=$(cut -d' ' -f1 /proc/loadavg)
		sleep 0.5 # wrangler prints the worker's console lines after the answer
		said=$(grep -o 'started in .*\|handler_built=.*' "$log" | tr '\n' ' ' || true)
		echo "$wasm: first request $first, the next $next; load $load; $said"
		kill $pid
		wait $pid 2>/dev/null || true
	done
done

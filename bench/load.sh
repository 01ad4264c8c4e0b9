#!/usr/bin/env bash
# Load test of the local host: receipted fn dispatches over HTTP keep-alive.
#
#   bench/load.sh [SECONDS] [CONNECTIONS...]     default: 10 s at 8, 16 and 32 connections
#
# ROWCALL_BIN=path runs that binary instead of building ./host (bench/ab.sh does).
#
# Starts `rowcall serve` on a fresh data directory, registers the WAT echo
# module as the row ECHO, and drives POST /api/dispatch {"key":"ECHO","body":"hello"}
# with wrk (Debian's package, installed if missing; one thread, on the same two
# cores as the host) as fast as each number of keep-alive connections allows.
# Every answer is sent only after its receipt is stored. For each run it prints
# wrk's requests/s and latency percentiles, errors, and the host's CPU time per
# request; at the end, how many receipts were stored and that the chain verifies.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shift || true
[ $# -gt 0 ] && conns=("$@") || conns=(8 16 32)

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
bin=${ROWCALL_BIN:-bin/rowcall}
[ -n "${ROWCALL_BIN:-}" ] || go build -o bin/rowcall ./host
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
"$bin" serve --addr 127.0.0.1:$port --data "$data" --no-examples >"$data/log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "rowcall serving" "$data/log" 2>/dev/null && break; sleep 0.1; done
key=$(cat "$data/owner.key")
url=http://127.0.0.1:$port

curl -fsS -X PUT "$url/api/modules/echo" -H "x-terminal-key: $key" -H 'content-type: application/wasm' \
  --data-binary @wasm/examples/echo.wasm >/dev/null
curl -fsS -X POST "$url/api/directory" -H "x-terminal-key: $key" -H 'content-type: application/json' \
  -d '{"key":"ECHO","type":"fn","target":"echo","content":"# WHAT: echo\n[\"$1+\"]"}' >/dev/null
cat >"$data/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"key":"ECHO","body":"hello"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["x-terminal-key"] = "$key"
LUA

cputicks() { awk '{print $14 + $15}' /proc/$pid/stat; } # utime + stime, in 1/100 s
run() { wrk -t1 -c"$1" -d"$2" --latency -s "$data/post.lua" "$url/api/dispatch"; }

echo "== warm-up"; run 16 2s >/dev/null
for c in "${conns[@]}"; do
  t0=$(cputicks)
  out=$(run "$c" "${secs}s")
  t1=$(cputicks)
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  printf '== %s connections, %s s: %s requests/s  p50 %s  p90 %s  p99 %s  host CPU %s µs/request%s\n' "$c" "$secs" "$rps" \
    "$(awk '/ 50%/{print $2}' <<<"$out")" "$(awk '/ 90%/{print $2}' <<<"$out")" "$(awk '/ 99%/{print $2}' <<<"$out")" \
    "$(awk -v t=$((t1 - t0)) -v r="$rps" -v s="$secs" 'BEGIN{printf "%.0f", t * 10000 / (r * s)}')" \
    "$(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr -s ' ' | sed 's/^/  /' | tr -d '\n')"
done
"$bin" receipt export --url "$url" --data "$data" >"$data/chain.json"
"$bin" receipt keys --url "$url" >"$data/keys.json"
echo "== receipts stored, verified offline: $("$bin" receipt verify "$data/chain.json" --keys "$data/keys.json" 2>&1)"

#!/usr/bin/env bash
# build/worker.sh — build rowcall's Cloudflare worker into build/out/worker/
# (ignored by git), which wrangler.toml's main points at:
#
#   worker.mjs     rowcall's entry (build/shim/worker.mjs): one Go instance per
#                  isolate, started on the first request and handed every
#                  request after it, each with its own env and ctx
#   wasm_exec.js   Go's JavaScript support with syumai/workers' "context" global
#                  (from go run …/workers-assets-gen -mode=go)
#   app.wasm       the Go worker (GOOS=js GOARCH=wasm ./worker, -trimpath,
#                  symbols and DWARF stripped with -ldflags='-s -w'), then
#                  optionally shrunk by binaryen's wasm-opt (see below)
#
# and print the .wasm size, raw and gzipped (Cloudflare's script size limit is
# on the compressed size: 3 MB on the Workers Free plan, 10 MB on Paid).
#
#   build/worker.sh [--quiet]
#
# ROWCALL_WASM_OPT=-Oz (or -O2) passes the module through binaryen's wasm-opt
# with that flag: npm's binaryen, pinned in package.json (make deps); WASM_OPT
# names another wasm-opt binary. It is off by default: on the 28 MB module
# npm's wasm-opt (which runs as JavaScript) took 43 minutes on this project's
# shared 2-core machine, for 9% raw and under 1% gzip (docs/benchmarks.md):
# too long for the tests, which build the worker every run. Its output is
# kept in build/out/wasm-opt/, named by the SHA-256 of the module Go built, the
# flags and wasm-opt's version: an unchanged worker is not optimised twice
# (Go's -trimpath build is reproducible). Without wasm-opt
# installed the step is skipped with a note.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/build/out/worker
cd "$root"
quiet=0
[ "${1:-}" = --quiet ] && quiet=1
started=$(date +%s)
# Everything is built in a scratch directory and moved into place file by file
# (app.wasm first, worker.mjs last), so a running `wrangler dev`, which watches
# build/out/worker/, never bundles a half-built worker. The generator empties
# its output directory: it gets one of its own. Of what it writes, rowcall
# keeps wasm_exec.js; syumai's worker.mjs (a Go runtime per request) and
# runtime.mjs give way to the shim.
mkdir -p "$root/build/out"
tmp=$(mktemp -d "$root/build/out/.worker.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
go run github.com/syumai/workers/cmd/workers-assets-gen -mode=go -o "$tmp/gen"
GOOS=js GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/app.wasm" ./worker
opt=${ROWCALL_WASM_OPT:-off}
wasmopt=${WASM_OPT:-$root/node_modules/.bin/wasm-opt}
if [ "$opt" != off ] && [ ! -x "$wasmopt" ]; then
	echo "build/worker.sh: binaryen's wasm-opt is not installed (make deps): app.wasm is not optimised" >&2
	opt=off
fi
if [ "$opt" != off ]; then
	# Go's js/wasm output uses sign extension, non-trapping float-to-int and
	# bulk memory: wasm-opt must be told it may keep them.
	flags=("$opt" --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory)
	cache=$root/build/out/wasm-opt
	id=$( (sha256sum <"$tmp/app.wasm"; echo "${flags[*]}"; "$wasmopt" --version) | sha256sum | cut -c1-32)
	if [ ! -f "$cache/$id.wasm" ]; then
		mkdir -p "$cache"
		[ $quiet = 1 ] || echo "wasm-opt ${flags[*]} (long; the result is kept in ${cache#"$root"/}/)"
		"$wasmopt" "${flags[@]}" "$tmp/app.wasm" -o "$tmp/opt.wasm"
		find "$cache" -name '*.wasm' -mtime +7 -delete # old workers' outputs
		mv -f "$tmp/opt.wasm" "$cache/$id.wasm"
	fi
	cp -f "$cache/$id.wasm" "$tmp/app.wasm"
fi
mkdir -p "$out"
mv -f "$tmp/app.wasm" "$out/app.wasm"
mv -f "$tmp/gen/wasm_exec.js" "$out/wasm_exec.js"
cp build/shim/worker.mjs "$tmp/worker.mjs"
mv -f "$tmp/worker.mjs" "$out/worker.mjs"
rm -f "$out/runtime.mjs"
raw=$(stat -c %s "$out/app.wasm")
gz=$(gzip -9c "$out/app.wasm" | wc -c)
if [ $quiet = 0 ]; then
	printf 'built %s in %ss\n' "${out#"$root"/}/app.wasm" $(($(date +%s) - started))
	awk -v r="$raw" -v g="$gz" 'BEGIN { printf "app.wasm: %d bytes raw (%.2f MB), %d bytes gzip -9 (%.2f MB)\n", r, r/1e6, g, g/1e6 }'
fi

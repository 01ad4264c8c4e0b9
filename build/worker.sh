#!/usr/bin/env bash
# build/worker.sh — build rowcall's Cloudflare worker into build/out/worker/
# (ignored by git), which wrangler.toml's main points at:
#
#   worker.mjs, runtime.mjs, wasm_exec.js   syumai/workers' JavaScript glue
#                                           (go run …/workers-assets-gen -mode=go)
#   app.wasm                                the Go worker (GOOS=js GOARCH=wasm ./worker)
#
# and print the .wasm size, raw and gzipped (Cloudflare's script size limit is
# on the compressed size: 3 MB on the Workers Free plan, 10 MB on Paid).
#
#   build/worker.sh [--quiet]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/build/out/worker
cd "$root"
quiet=0
[ "${1:-}" = --quiet ] && quiet=1
started=$(date +%s)
# The generator empties its output directory: give it one of its own.
go run github.com/syumai/workers/cmd/workers-assets-gen -mode=go -o "$out"
GOOS=js GOARCH=wasm CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/app.wasm" ./worker
raw=$(stat -c %s "$out/app.wasm")
gz=$(gzip -9c "$out/app.wasm" | wc -c)
if [ $quiet = 0 ]; then
	printf 'built %s in %ss\n' "${out#"$root"/}/app.wasm" $(($(date +%s) - started))
	awk -v r="$raw" -v g="$gz" 'BEGIN { printf "app.wasm: %d bytes raw (%.2f MB), %d bytes gzip -9 (%.2f MB)\n", r, r/1e6, g, g/1e6 }'
fi

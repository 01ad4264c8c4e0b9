//go:build tools

// This file is never built. It records the build tool build/worker.sh runs
// with go run — syumai/workers' asset generator, whose wasm_exec.js the shim
// (build/shim/worker.mjs) loads — so go mod tidy keeps its module in go.mod
// although no package of the worker imports syumai/workers any more.
package main

import _ "github.com/syumai/workers/cmd/workers-assets-gen"

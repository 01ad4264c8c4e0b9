//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// main explains how to build the worker when it is built for the wrong target
// (go vet ./... and go build ./... still compile this package natively).
func main() {
	fmt.Fprintln(os.Stderr, "rowcall's worker runs on Cloudflare Workers: build it with build/worker.sh (GOOS=js GOARCH=wasm)")
	os.Exit(2)
}

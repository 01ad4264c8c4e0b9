//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"syscall/js"
)

// The receipt signature through WebCrypto: the shim's sign helper
// (build/shim/worker.mjs) signs with crypto.subtle's Ed25519, native code,
// where Go's crypto/ed25519 on js/wasm costs about as much CPU as the rest of
// a receipt's writing (docs/benchmarks.md, "The edge"). Ed25519 is
// deterministic: the signature is the one Go would make, and should the
// helper fail, ledger.Signer signs in Go from then on (SignWith).

var shimSign = runtimeContext.Get("sign")

// webCryptoSign returns the SignWith function for the base64 seed seed: the
// shim imports the key once per isolate and signs each message with it.
func webCryptoSign(seed string) func(msg []byte) ([]byte, error) {
	return func(msg []byte) ([]byte, error) {
		b := uint8Array.New(len(msg))
		js.CopyBytesToJS(b, msg)
		r, err := shimOp(context.Background(), shimSign, seed, b)
		if err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
		return r.body, nil
	}
}

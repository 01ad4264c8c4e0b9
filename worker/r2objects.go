//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"syscall/js"

	"github.com/rowcall/rowcall/sqlstore"
)

// receiptsBinding is the R2 bucket sealed receipt segments go to: with it
// bound, the worker seals the chain (sealing.go); without it, every receipt
// stays in D1.
const receiptsBinding = "RECEIPTS"

// receiptObjects is the worker's sqlstore.ObjectStore: the R2 bucket bound as
// RECEIPTS, looked up on the env of the request each call is made for.
type receiptObjects struct{}

var _ sqlstore.ObjectStore = receiptObjects{}

func (receiptObjects) bucket(ctx context.Context) (js.Value, error) {
	h, err := handleFrom(ctx)
	if err != nil {
		return js.Value{}, err
	}
	b := h.env.Get(receiptsBinding)
	if b.Type() != js.TypeObject {
		return js.Value{}, fmt.Errorf("the worker has no R2 binding named %s", receiptsBinding)
	}
	return b, nil
}

func (o receiptObjects) Put(ctx context.Context, key string, data []byte) error {
	b, err := o.bucket(ctx)
	if err == nil {
		err = r2Put(ctx, b, key, data)
	}
	if err != nil {
		return fmt.Errorf("r2 %s: put %s: %w", receiptsBinding, key, err)
	}
	return nil
}

func (o receiptObjects) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := o.bucket(ctx)
	if err != nil {
		return nil, fmt.Errorf("r2 %s: get %s: %w", receiptsBinding, key, err)
	}
	data, found, err := r2Get(ctx, b, key)
	if err != nil {
		return nil, fmt.Errorf("r2 %s: get %s: %w", receiptsBinding, key, err)
	}
	if !found {
		return nil, fmt.Errorf("r2 %s: %s: %w", receiptsBinding, key, sqlstore.ErrObjectNotFound)
	}
	return data, nil
}

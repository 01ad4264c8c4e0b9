//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"syscall/js"

	"github.com/rowcall/rowcall/runners/fn/modules"
)

// moduleBlobs is the worker's modules.BlobStore: the R2 bucket bound as
// MODULES, looked up for each call on the env of the request making it, or,
// when the Worker has no such binding, D1's module_blobs table.
type moduleBlobs struct{ sql *modules.SQLBlobs }

var _ modules.BlobStore = moduleBlobs{}

// store returns the blob store for ctx's request.
func (b moduleBlobs) store(ctx context.Context) (modules.BlobStore, error) {
	h, err := handleFrom(ctx)
	if err != nil {
		return nil, err
	}
	if bucket := h.env.Get("MODULES"); bucket.Type() == js.TypeObject {
		return r2Blobs{bucket: bucket}, nil
	}
	return b.sql, nil
}

func (b moduleBlobs) Put(ctx context.Context, digest string, data []byte) error {
	s, err := b.store(ctx)
	if err != nil {
		return err
	}
	return s.Put(ctx, digest, data)
}

func (b moduleBlobs) Get(ctx context.Context, digest string) ([]byte, error) {
	s, err := b.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, digest)
}

func (b moduleBlobs) Has(ctx context.Context, digest string) (bool, error) {
	s, err := b.store(ctx)
	if err != nil {
		return false, err
	}
	return s.Has(ctx, digest)
}

func (b moduleBlobs) Delete(ctx context.Context, digest string) error {
	s, err := b.store(ctx)
	if err != nil {
		return err
	}
	return s.Delete(ctx, digest)
}

// r2Blobs is a modules.BlobStore in an R2 bucket (a binding of one request):
// one object per module, named modules/<sha256>.wasm, reached through the
// shim's r2 helper (ops.go). R2 writes are atomic per object, so a reader
// never sees part of one; the registry verifies the digest of what it reads
// back.
type r2Blobs struct{ bucket js.Value }

var _ modules.BlobStore = r2Blobs{}

var shimR2 = runtimeContext.Get("r2")

func r2Key(digest string) string { return "modules/" + digest + ".wasm" }

func (b r2Blobs) Put(ctx context.Context, digest string, data []byte) error {
	if ok, err := b.Has(ctx, digest); err != nil || ok {
		return err
	}
	if err := r2Put(ctx, b.bucket, r2Key(digest), data); err != nil {
		return fmt.Errorf("r2: put %s: %w", digest, err)
	}
	return nil
}

func (b r2Blobs) Get(ctx context.Context, digest string) ([]byte, error) {
	data, found, err := r2Get(ctx, b.bucket, r2Key(digest))
	if err != nil {
		return nil, fmt.Errorf("r2: get %s: %w", digest, err)
	}
	if !found {
		return nil, fmt.Errorf("r2: %s: %w", digest, modules.ErrBlobNotFound)
	}
	return data, nil
}

func (b r2Blobs) Has(ctx context.Context, digest string) (bool, error) {
	r, err := shimOp(ctx, shimR2, b.bucket, "head", r2Key(digest), js.Null())
	if err != nil {
		return false, fmt.Errorf("r2: head %s: %w", digest, err)
	}
	return r.text == "found", nil
}

// r2Put writes one object to bucket: R2 stores it whole or not at all, and
// replaces an object of the same key.
func r2Put(ctx context.Context, bucket js.Value, key string, data []byte) error {
	body := uint8Array.New(len(data))
	js.CopyBytesToJS(body, data)
	_, err := shimOp(ctx, shimR2, bucket, "put", key, body)
	return err
}

// r2Get reads one object of bucket; found is false when there is none.
func r2Get(ctx context.Context, bucket js.Value, key string) (data []byte, found bool, err error) {
	r, err := shimOp(ctx, shimR2, bucket, "get", key, js.Null())
	if err != nil || r.text != "found" {
		return nil, false, err
	}
	return r.body, true, nil
}

func (b r2Blobs) Delete(ctx context.Context, digest string) error {
	if _, err := shimOp(ctx, shimR2, b.bucket, "delete", r2Key(digest), js.Null()); err != nil {
		return fmt.Errorf("r2: delete %s: %w", digest, err)
	}
	return nil
}

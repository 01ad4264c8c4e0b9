//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/rowcall/rowcall/modules"
	"github.com/syumai/workers/cloudflare/r2"
)

// r2Blobs is a modules.BlobStore in an R2 bucket: one object per module, named
// modules/<sha256>.wasm. R2 writes are atomic per object, so a reader never
// sees part of one; the registry verifies the digest of what it reads back.
type r2Blobs struct{ bucket *r2.Bucket }

var _ modules.BlobStore = r2Blobs{}

func r2Key(digest string) string { return "modules/" + digest + ".wasm" }

func (b r2Blobs) Put(ctx context.Context, digest string, data []byte) error {
	if ok, err := b.Has(ctx, digest); err != nil || ok {
		return err
	}
	if _, err := b.bucket.Put(r2Key(digest), io.NopCloser(bytes.NewReader(data)), nil); err != nil {
		return fmt.Errorf("r2: put %s: %w", digest, err)
	}
	return nil
}

func (b r2Blobs) Get(_ context.Context, digest string) ([]byte, error) {
	obj, err := b.bucket.Get(r2Key(digest))
	if err != nil {
		return nil, fmt.Errorf("r2: get %s: %w", digest, err)
	}
	if obj == nil || obj.Body == nil {
		return nil, fmt.Errorf("r2: %s: %w", digest, modules.ErrBlobNotFound)
	}
	data, err := io.ReadAll(obj.Body)
	if err != nil {
		return nil, fmt.Errorf("r2: read %s: %w", digest, err)
	}
	return data, nil
}

func (b r2Blobs) Has(_ context.Context, digest string) (bool, error) {
	obj, err := b.bucket.Head(r2Key(digest))
	if err != nil {
		return false, fmt.Errorf("r2: head %s: %w", digest, err)
	}
	return obj != nil, nil
}

func (b r2Blobs) Delete(_ context.Context, digest string) error {
	if err := b.bucket.Delete(r2Key(digest)); err != nil {
		return fmt.Errorf("r2: delete %s: %w", digest, err)
	}
	return nil
}

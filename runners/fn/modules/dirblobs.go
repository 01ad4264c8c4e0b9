package modules

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DirBlobs is a BlobStore in a disk directory: one file per blob at
// <dir>/<first two hex digits>/<digest>.wasm, written to a temporary file and
// renamed into place so a reader never sees part of one.
type DirBlobs struct{ dir string }

// NewDirBlobs returns a BlobStore under dir, creating dir if needed.
func NewDirBlobs(dir string) (*DirBlobs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("modules: blob directory: %w", err)
	}
	return &DirBlobs{dir: dir}, nil
}

func (d *DirBlobs) path(digest string) (string, error) {
	if !validDigest(digest) {
		return "", fmt.Errorf("modules: blob digest %q is not 64 lowercase hex digits", digest)
	}
	return filepath.Join(d.dir, digest[:2], digest+".wasm"), nil
}

// Put writes the file unless it exists.
func (d *DirBlobs) Put(_ context.Context, digest string, data []byte) error {
	p, err := d.path(digest)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("modules: write blob %s: %w", digest, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("modules: write blob %s: %w", digest, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("modules: write blob %s: %w", digest, err)
	}
	return nil
}

// Get reads the file.
func (d *DirBlobs) Get(_ context.Context, digest string) ([]byte, error) {
	p, err := d.path(digest)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("modules: blob %s: %w", digest, ErrBlobNotFound)
	}
	return b, err
}

// Has reports whether the file exists.
func (d *DirBlobs) Has(_ context.Context, digest string) (bool, error) {
	p, err := d.path(digest)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Delete removes the file.
func (d *DirBlobs) Delete(_ context.Context, digest string) error {
	p, err := d.path(digest)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("modules: delete blob %s: %w", digest, err)
	}
	return nil
}

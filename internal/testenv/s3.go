package testenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
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
	mem := s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s3 := gofakes3.New(mem).Server()
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

package hostmain

import (
	"fmt"
	"strings"

	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/s3objects"
)

// DefaultArchiveAuth names the environment variables that hold an S3
// archive's access key id and secret access key (--receipt-archive-auth).
const DefaultArchiveAuth = "AWS_ACCESS_KEY_ID:AWS_SECRET_ACCESS_KEY"

// ArchiveHelp and ArchiveAuthHelp are the help of serve's --receipt-archive
// and --receipt-archive-auth, and of receipt archive's --archive and
// --archive-auth.
const (
	ArchiveHelp     = "where sealed receipt segments go: a directory, or an S3-compatible bucket as s3://BUCKET/PREFIX?endpoint=URL&region=R (e.g. R2's https://ACCOUNT.r2.cloudflarestorage.com, region auto)"
	ArchiveAuthHelp = "with an s3:// archive: the environment variables holding its access key id and secret access key, as ID_VAR:SECRET_VAR"
)

// OpenArchive returns the object store archive names: s3://… (its
// credentials read from the two variables auth names, ID_VAR:SECRET_VAR,
// with lookup) or a directory.
func OpenArchive(archive, auth string, lookup func(string) (string, bool)) (sqlstore.ObjectStore, error) {
	if !s3objects.IsURL(archive) {
		return sqlstore.DirObjects{Dir: archive}, nil
	}
	idVar, secretVar, ok := strings.Cut(auth, ":")
	if !ok || idVar == "" || secretVar == "" {
		return nil, fmt.Errorf("receipt archive auth %q: want ID_VAR:SECRET_VAR, the names of the environment variables holding the access key id and secret access key (default %s)", auth, DefaultArchiveAuth)
	}
	id, _ := lookup(idVar)
	secret, _ := lookup(secretVar)
	if id == "" || secret == "" {
		return nil, fmt.Errorf("receipt archive %s: the environment variables %s and %s (named by the archive auth %s) must hold its access key id and secret access key", archive, idVar, secretVar, auth)
	}
	return s3objects.Open(archive, id, secret)
}

package hostmain

import (
	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/openapi"
)

// openapiRows is the host's converter for POST /api/import/openapi (the
// worker leaves it out: kin-openapi would add 1.45 MB to its binary).
func openapiRows(doc []byte, o api.OpenAPIOptions) ([]rowcall.Row, []string, error) {
	res, err := openapi.Convert(doc, openapi.Options(o))
	return res.Rows, res.Skipped, err
}

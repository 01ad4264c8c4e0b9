package fn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
)

// Argv renders inv.Row's content template (default ["$1"]) into the argv a
// module receives: argv[0] is the module name, then one string per element of
// the rendered JSON array (a string element as is, any other element as its
// compact JSON text). fail is the row's ERR result when the template is unusable:
// the seed's ERR:fn:bad_content_json:<message> and ERR:fn:content_not_array, or
// ERR:fn:bad_args when an argument holds a NUL byte (argv strings cannot).
func Argv(module string, inv *rowcall.Invocation) (argv []string, fail *rowcall.Failure) {
	tmpl := inv.Row.Payload()
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	a := inv.Args
	if a == nil {
		a = args.Split(inv.Body)
	}
	text := args.Render(tmpl, args.JSON, args.Values{Args: a, Vars: inv.Vars})
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(text), &items); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, rowcall.Fail("fn", "content_not_array")
		}
		return nil, rowcall.Fail("fn", "bad_content_json", err.Error())
	}
	argv = make([]string, 1, len(items)+1)
	argv[0] = module
	for i, raw := range items {
		var s string
		if len(raw) > 0 && raw[0] == '"' {
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, rowcall.Fail("fn", "bad_content_json", err.Error())
			}
		} else {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, rowcall.Fail("fn", "bad_content_json", err.Error())
			}
			s = b.String()
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, rowcall.Fail("fn", "bad_args", fmt.Sprintf("argument %d contains a NUL byte, which a WASI argument cannot hold", i+1))
		}
		argv = append(argv, s)
	}
	return argv, nil
}

package fn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/args"
	"github.com/rowcall/rowcall/internal/jsontext"
)

// Argv renders inv.Row's content template (default ["$1"]) into the argv a
// module receives: argv[0] is the module name, then one string per element of
// the rendered JSON array (a string element as is, any other element as its
// compact JSON text). fail is the row's ERR result when the template is unusable:
// the seed's ERR:fn:bad_content_json:<message> and ERR:fn:content_not_array, or
// ERR:fn:bad_args when an argument holds a NUL byte (argv strings cannot) or
// is refused by a join reference $N[sep] (args.Check).
func Argv(module string, inv *rowcall.Invocation) (argv []string, fail *rowcall.Failure) {
	tmpl := inv.Row.Payload()
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	a := inv.Args
	if a == nil {
		a = args.Split(inv.Body)
	}
	v := args.Values{Args: a, Vars: inv.Vars}
	if err := args.Check(tmpl, v); err != nil {
		return nil, rowcall.Fail("fn", "bad_args", err.Error())
	}
	text := args.Render(tmpl, args.JSON, v)
	if argv, ok := plainArgv(module, text); ok {
		return argv, nil
	}
	return jsonArgv(module, text)
}

// jsonArgv is Argv's decoding of the rendered template with encoding/json.
func jsonArgv(module, text string) (argv []string, fail *rowcall.Failure) {
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

// plainArgv is Argv's answer without encoding/json for the common case: text
// is a flat array of strings holding no escape, control character or invalid
// UTF-8 (so each element is its bytes between the quotes, as json.Unmarshal
// would read it). ok is false for anything else, which Argv then decodes
// (and explains) with encoding/json.
func plainArgv(module, text string) (argv []string, ok bool) {
	if !utf8.ValidString(text) {
		return nil, false
	}
	s := strings.Trim(text, jsontext.Space)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	s = strings.Trim(s[1:len(s)-1], jsontext.Space)
	argv = make([]string, 1, 1+strings.Count(s, ","))
	argv[0] = module
	for s != "" {
		arg, rest, ok := jsontext.PlainString(s)
		if !ok {
			return nil, false
		}
		argv = append(argv, arg)
		s = strings.TrimLeft(rest, jsontext.Space)
		if s == "" {
			break
		}
		if s[0] != ',' {
			return nil, false
		}
		if s = strings.TrimLeft(s[1:], jsontext.Space); s == "" {
			return nil, false // a trailing comma
		}
	}
	return argv, true
}

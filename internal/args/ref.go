package args

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// ref is one parsed reference.
type ref struct {
	size int    // bytes of template it spans; 0 means "not a reference"
	raw  bool   // $$: insert without escaping
	rest bool   // $N+
	n    int    // argument number, 1-based; 0 for a named reference
	name string // NAME of $NAME
	path string // the gjson path after $NAME., or ""
	join string // the separator of $N[sep], or "": render a JSON array's items joined by it
}

// maxArg caps an argument number while its digits are read, so a long run of
// digits cannot overflow; any number that large is past the last argument.
const maxArg = 1 << 30

// parseRef reads the reference at the start of s, which begins with '$'.
func parseRef(s string) ref {
	var r ref
	i := 1
	if i < len(s) && s[i] == '$' {
		r.raw = true
		i++
	}
	if i == len(s) {
		return ref{}
	}
	switch c := s[i]; {
	case isDigit(c):
		for ; i < len(s) && isDigit(s[i]); i++ {
			if r.n < maxArg {
				r.n = r.n*10 + int(s[i]-'0')
			}
		}
		if r.n == 0 {
			return ref{} // $0 is text
		}
		if i < len(s) && s[i] == '+' {
			r.rest = true
			i++
		} else if sep, ok := joinSep(s[i:]); ok {
			r.join = sep
			i += len(sep) + 2
		}
	case isNameStart(c):
		start := i
		for i++; i < len(s) && isNameChar(s[i]); i++ {
		}
		r.name = s[start:i]
		end := i
		for end+1 < len(s) && s[end] == '.' && isPathChar(s[end+1]) {
			for end++; end < len(s) && isPathChar(s[end]); end++ {
			}
		}
		if end > i {
			r.path = s[i+1 : end]
			i = end
		}
		if r.name == Self && r.path == "" {
			r.raw = true // the host's own base URL, from its configuration: never escaped
		}
	default:
		return ref{}
	}
	r.size = i
	return r
}

// joinSep reads the separator of a join modifier "[sep]" at the start of s:
// one or more bytes, none of them '[', ']', '$', '"', a blank or a control
// character. ok is false when s does not start with one, so "$1[]", "$1[a b]"
// and "$1[" stay an argument followed by text.
func joinSep(s string) (sep string, ok bool) {
	if len(s) < 3 || s[0] != '[' {
		return "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == ']':
			return s[1:i], i > 1
		case c <= ' ' || c == 0x7f || c == '[' || c == '$' || c == '"':
			return "", false
		}
	}
	return "", false
}

// value resolves r against v; ok is false for a name with no value.
func (r ref) value(v Values) (val string, ok bool) {
	if r.n == 0 {
		val, ok = v.Vars[r.name]
		if ok && r.path != "" {
			val = pick(val, r.path)
		}
		return val, ok
	}
	if r.n > len(v.Args) {
		return "", true
	}
	if !r.rest || r.n == len(v.Args) {
		return v.Args[r.n-1], true
	}
	return strings.Join(v.Args[r.n-1:], "|"), true
}

// items are the values a join reference $N[sep] renders for the argument
// val: the items of a JSON array (a string without its quotes, a number or
// boolean as its JSON text), or val itself, one value, when it is not JSON
// array or object text. An object, text that begins like JSON but is not, and
// an item that is an object, an array or null are refused.
func (r ref) items(val string) ([]string, error) {
	t := strings.TrimLeft(val, " \t\r\n")
	if t == "" || (t[0] != '[' && t[0] != '{') {
		return []string{val}, nil
	}
	what := ""
	switch {
	case !gjson.Valid(t):
		what = "not valid JSON (it begins with " + strconv.QuoteRune(rune(t[0])) + ")"
	case t[0] == '{':
		what = "a JSON object"
	}
	var out []string
	if what == "" {
		gjson.Parse(t).ForEach(func(_, item gjson.Result) bool {
			switch item.Type {
			case gjson.String:
				out = append(out, item.Str)
			case gjson.Number, gjson.True, gjson.False:
				out = append(out, item.Raw)
			default:
				what = fmt.Sprintf("a JSON array whose item %d is %s", len(out)+1, kind(item))
				return false
			}
			return true
		})
	}
	if what != "" {
		return nil, fmt.Errorf("argument %d is %s; $%d[%s] takes a JSON array of strings, numbers or booleans, or one plain value", r.n, what, r.n, r.join)
	}
	return out, nil
}

// kind names a JSON value that a join cannot render as an item.
func kind(v gjson.Result) string {
	switch {
	case v.Type == gjson.Null:
		return "null"
	case v.IsArray():
		return "an array"
	}
	return "an object"
}

// pick returns the field at path in the JSON text val (or in the body of an
// http result "HTTP <status>:<body>"): a string without its quotes, anything
// else as its JSON text, "" when val is not JSON or the path leads nowhere.
func pick(val, path string) string {
	val = HTTPBody(val)
	if !gjson.Valid(val) {
		return ""
	}
	res := gjson.Get(val, path)
	if !res.Exists() {
		return ""
	}
	if res.Type == gjson.String {
		return res.Str
	}
	return res.Raw
}

// HTTPBody returns the body of an http row's result "HTTP <status>:<body>"
// (three digits of status), or val unchanged when it has another form. MCP
// reads a declared output from it too (api/mcp).
func HTTPBody(val string) string {
	if len(val) >= 9 && val[:5] == "HTTP " && isDigit(val[5]) && isDigit(val[6]) && isDigit(val[7]) && val[8] == ':' {
		return val[9:]
	}
	return val
}

func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || isDigit(c) }
func isPathChar(c byte) bool  { return isNameChar(c) || c == '#' || c == '-' }

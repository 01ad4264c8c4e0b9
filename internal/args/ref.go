package args

import (
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

// pick returns the field at path in the JSON text val (or in the body of an
// http result "HTTP <status>:<body>"): a string without its quotes, anything
// else as its JSON text, "" when val is not JSON or the path leads nowhere.
func pick(val, path string) string {
	val = httpBody(val)
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

// httpBody returns the body of an http row's result "HTTP <status>:<body>"
// (three digits of status), or val unchanged when it has another form.
func httpBody(val string) string {
	if len(val) >= 9 && val[:5] == "HTTP " && isDigit(val[5]) && isDigit(val[6]) && isDigit(val[7]) && val[8] == ':' {
		return val[9:]
	}
	return val
}

func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || isDigit(c) }
func isPathChar(c byte) bool  { return isNameChar(c) || c == '#' || c == '-' }

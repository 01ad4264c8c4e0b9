package args

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall/internal/jsontext"
)

// renderer writes one template's output and tracks where in it the next value
// lands: in the authority or after a '?' (URL), or inside a string literal
// (JSON).
type renderer struct {
	b         strings.Builder
	mode      Mode
	query     bool // URL: a '?' has been written
	authority bool // URL: after the first "://", before the '/', '?' or '#' that ends the authority
	pathed    bool // URL: the authority has ended (a later "://" is in the path)
	str       bool // JSON: inside a string literal
	esc       bool // JSON: inside a string literal, right after a backslash
}

// text writes template text (or a raw value) and follows its structure.
func (r *renderer) text(s string) {
	r.b.WriteString(s)
	switch r.mode {
	case URL:
		if !r.query {
			r.url(s)
		}
	case JSON:
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case r.esc:
				r.esc = false
			case r.str && c == '\\':
				r.esc = true
			case c == '"':
				r.str = !r.str
			}
		}
	}
}

// url follows URL text s (just written, before any '?'): its first '?', and
// where its authority begins ("://") and ends.
func (r *renderer) url(s string) {
	end := r.b.Len() - len(s) // where s starts in the output
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '?':
			r.query, r.authority = true, false
			return
		case r.authority && (c == '/' || c == '#'):
			r.authority, r.pathed = false, true
		case c == '/' && !r.authority && !r.pathed && end+i >= 2 && r.b.String()[end+i-2:end+i] == ":/":
			r.authority = true
		}
	}
}

// ref writes the reference at the start of s (s[0] == '$') and returns how
// many bytes of s it used, and the refusal of a join reference's argument
// (which is then written whole, as $N would write it).
func (r *renderer) ref(s string, v Values) (int, error) {
	ref := parseRef(s)
	if ref.size == 0 {
		r.text("$")
		return 1, nil
	}
	val, ok := ref.value(v)
	if !ok {
		r.text(s[:ref.size]) // unresolved: stays as written
		return ref.size, nil
	}
	if ref.join == "" {
		r.value(val, ref.raw)
		return ref.size, nil
	}
	items, err := ref.items(val)
	if err != nil {
		items = []string{val}
	}
	for i, item := range items {
		if i > 0 {
			r.text(ref.join)
		}
		r.value(item, ref.raw)
	}
	return ref.size, err
}

// value writes one value, escaped for where it lands unless raw.
func (r *renderer) value(val string, raw bool) {
	if raw || r.mode == Raw {
		r.text(val)
		return
	}
	switch r.mode {
	case URL:
		switch {
		case r.query:
			r.b.WriteString(url.QueryEscape(val))
		case r.authority: // an '@' would make what came before it a user name, and the value the host
			r.b.WriteString(strings.ReplaceAll(url.PathEscape(val), "@", "%40"))
		default:
			r.b.WriteString(url.PathEscape(val))
		}
	case form:
		r.b.WriteString(url.QueryEscape(val))
	case JSON:
		switch {
		case r.str:
			if r.esc { // the template's backslash must not escape the value
				r.b.WriteByte('\\')
				r.esc = false
			}
			jsontext.WriteChars(&r.b, val)
		case isJSONValue(val):
			r.b.WriteString(val)
		default:
			r.b.WriteByte('"')
			jsontext.WriteChars(&r.b, val)
			r.b.WriteByte('"')
		}
	default:
		r.b.WriteString(val)
	}
}

// isJSONValue reports whether s is exactly one JSON value. The first-byte
// check spares json.Valid (and its error allocation) for plain words.
func isJSONValue(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" || strings.IndexByte(`{["-0123456789tfn`, t[0]) < 0 {
		return false
	}
	return json.Valid([]byte(s))
}

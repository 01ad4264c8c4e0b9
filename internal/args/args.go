package args

import "strings"

// Values are what a template's references read.
type Values struct {
	Args []string          // $1…$N: the invocation body split by Split
	Vars map[string]string // $NAME: keys have no '$' ("PREV", flow binding names)
}

// Self is the name of the value that holds the base URL of the host running
// the call ($SELF; see the package documentation).
const Self = "SELF"

// Split cuts an invocation body into arguments on every '|'. Like the seed's
// JavaScript, "" gives one empty argument.
func Split(body string) []string { return strings.Split(body, "|") }

// Mode says what kind of text a template is, which decides how values are
// escaped. See the package documentation.
type Mode int

// The modes.
const (
	Raw  Mode = iota // values unchanged
	URL              // path-escaped before the first '?', query-escaped after
	JSON             // string-escaped inside a string literal, one JSON value or a quoted string outside
	Body             // an http body: picked from the template (single reference, JSON, form or Raw)
)

// form is the mode Body picks for a form body: every value query-escaped.
const form Mode = -1

// Render replaces the references in tmpl with values from v, escaped for
// mode. A join reference ($N[sep]) whose argument Check refuses renders that
// argument whole, as $N would; a caller that must not send such a value calls
// Check first.
func Render(tmpl string, mode Mode, v Values) string {
	out, _ := render(tmpl, mode, v)
	return out
}

// Check reports the first join reference in tmpl ($N[sep]) whose argument is
// neither a JSON array of strings, numbers or booleans nor one plain value
// (see the package documentation). The error says which argument and why;
// runners report it as their bad_args failure.
func Check(tmpl string, v Values) error {
	if strings.IndexByte(tmpl, '[') < 0 {
		return nil // no join reference
	}
	_, err := render(tmpl, Raw, v)
	return err
}

// render is Render, with the first refused join argument.
func render(tmpl string, mode Mode, v Values) (string, error) {
	i := strings.IndexByte(tmpl, '$')
	if i < 0 {
		return tmpl, nil
	}
	if mode == Body {
		if t, ok := singleRef(tmpl, v); ok {
			return t, nil
		}
		mode = bodyMode(tmpl)
	}
	r := renderer{mode: mode}
	r.b.Grow(len(tmpl) + 64)
	var first error
	for i >= 0 {
		r.text(tmpl[:i])
		tmpl = tmpl[i:]
		n, err := r.ref(tmpl, v)
		if first == nil {
			first = err
		}
		tmpl = tmpl[n:]
		i = strings.IndexByte(tmpl, '$')
	}
	r.text(tmpl)
	return r.b.String(), first
}

// singleRef renders a Body template that is exactly one reference (blanks
// around it ignored): the value itself, unchanged, or the reference as written
// when it names nothing.
func singleRef(tmpl string, v Values) (string, bool) {
	t := strings.TrimSpace(tmpl)
	ref := parseRef(t)
	if ref.size != len(t) || ref.size == 0 || ref.join != "" {
		return "", false
	}
	if val, ok := ref.value(v); ok {
		return val, true
	}
	return t, true
}

// bodyMode picks the mode for any other Body template: JSON, form or Raw.
func bodyMode(tmpl string) Mode {
	t := strings.TrimSpace(tmpl)
	switch {
	case t[0] == '{' || t[0] == '[':
		return JSON
	case isForm(t):
		return form
	}
	return Raw
}

// isForm reports whether t looks like a form body: no blanks, and a field name
// followed by '=' at the start.
func isForm(t string) bool {
	if strings.ContainsAny(t, " \t\r\n") {
		return false
	}
	i := 0
	for i < len(t) && isFormNameChar(t[i]) {
		i++
	}
	return i > 0 && i < len(t) && t[i] == '='
}

func isFormNameChar(c byte) bool {
	return isNameChar(c) || c == '.' || c == '~' || c == '%' || c == '[' || c == ']' || c == '-'
}

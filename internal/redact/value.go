package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Redact returns a redacted copy of v; v itself is never modified.
//
// Strings, []byte, maps keyed by string (map[string]any, map[string]string,
// map[string][]string, http.Header) and slices ([]any, []string) are walked
// directly and keep their type. Numbers, booleans and nil come back as they
// are. Any other value (a struct, a pointer, a typed map) is converted through
// its JSON encoding into the generic map[string]any / []any form and that is
// redacted; a value that cannot be encoded comes back as a redacted string of
// its %v form.
//
// In every map an entry whose key is a credential name (see SensitiveName) is
// dropped; the remaining keys and all strings have secret values replaced with
// Marker. If two keys redact to the same text, one of the entries is kept.
func Redact(v any, secrets []string) any {
	return walk(v, needles(secrets))
}

func walk(v any, ns []string) any {
	switch t := v.(type) {
	case nil, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v
	case string:
		return replace(t, ns)
	case []byte:
		return []byte(replace(string(t), ns))
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !SensitiveName(k) {
				out[replace(k, ns)] = walk(e, ns)
			}
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, e := range t {
			if !SensitiveName(k) {
				out[replace(k, ns)] = replace(e, ns)
			}
		}
		return out
	case http.Header:
		return http.Header(walkMulti(t, ns))
	case map[string][]string:
		return walkMulti(t, ns)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = walk(e, ns)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			out[i] = replace(e, ns)
		}
		return out
	}
	return walkForeign(v, ns)
}

func walkMulti(m map[string][]string, ns []string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, vs := range m {
		if SensitiveName(k) {
			continue
		}
		c := make([]string, len(vs))
		for i, e := range vs {
			c[i] = replace(e, ns)
		}
		out[replace(k, ns)] = c
	}
	return out
}

// walkForeign redacts a value of a type walk does not know through its JSON form.
func walkForeign(v any, ns []string) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return replace(fmt.Sprint(v), ns)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return replace(string(raw), ns)
	}
	return walk(generic, ns)
}

// credentialNames are the exact credential names, lower case, '-' read as '_'.
var credentialNames = map[string]bool{
	"authorization":       true,
	"proxy_authorization": true,
	"x_api_key":           true,
	"api_key":             true,
	"cookie":              true,
	"set_cookie":          true,
}

// credentialSuffixes end the *_API_KEY, *_TOKEN and *_SECRET shapes.
var credentialSuffixes = []string{"_api_key", "_token", "_secret"}

// SensitiveName reports whether a header or field name names credential
// material: authorization, proxy-authorization, x-api-key, api-key, cookie,
// set-cookie, or any name ending in _API_KEY, _TOKEN or _SECRET, compared
// case-insensitively with '-' read as '_'.
func SensitiveName(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if credentialNames[n] {
		return true
	}
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchBody is a few KB of JSON like an upstream answer: URLs with escapes,
// JSON escapes, and no secret in it (the common case).
func benchBody() string {
	var items []map[string]any
	for i := range 40 {
		items = append(items, map[string]any{
			"id":   i,
			"name": "item number " + strings.Repeat("x", i%7),
			"url":  "https://api.example/v1/items?id=" + strings.Repeat("a%2Fb", 2) + "&q=hello+world",
			"note": "a <b> & \"quoted\" path/to/thing",
		})
	}
	raw, _ := json.Marshal(map[string]any{"items": items})
	return string(raw)
}

// BenchmarkString is redact.String over a ~4 KB answer with two secrets.
func BenchmarkString(b *testing.B) {
	body := benchBody()
	secrets := []string{"sk-live-0123456789abcdef", "client/secret+value=="}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		String(body, secrets)
	}
}

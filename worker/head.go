package main

import (
	"net/http"
	"strings"
)

// The header codec of the shim (build/shim/worker.mjs, writeHead/readHead):
// a head is a first line ("METHOD URL" for a request, "STATUS TEXT" or the
// status text for a response) and then one "name:value" line per header
// value. It is the only way headers cross between Go and JavaScript, both
// ways and for both the request served and the fetches made.

// writeHead returns first and h as a head: one "\nName:value" per value, line
// breaks inside a value turned into spaces.
func writeHead(first string, h http.Header) string {
	var b strings.Builder
	b.WriteString(first)
	for k, vs := range h {
		for _, v := range vs {
			b.WriteByte('\n')
			b.WriteString(k)
			b.WriteByte(':')
			b.WriteString(headerValue.Replace(v))
		}
	}
	return b.String()
}

var headerValue = strings.NewReplacer("\r", " ", "\n", " ")

// readHead splits a head into its first line and its headers (names
// canonicalized, values in order; a line without ':' is skipped).
func readHead(head string) (string, http.Header) {
	first, rest, _ := strings.Cut(head, "\n")
	header := http.Header{}
	if rest == "" {
		return first, header
	}
	for line := range strings.SplitSeq(rest, "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok {
			k := http.CanonicalHeaderKey(name)
			header[k] = append(header[k], value)
		}
	}
	return first, header
}

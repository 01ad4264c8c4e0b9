package main

import (
	"net/http"
	"reflect"
	"testing"
)

// The head codec (head.go; worker.mjs writeHead/readHead): what one side
// writes, the other reads back, for requests and responses alike.
func TestHeadRoundTrip(t *testing.T) {
	h := http.Header{"Content-Type": {"application/json"}, "Set-Cookie": {"a=1", "b=2"}, "X-Time": {"10:15:00"}}
	first, got := readHead(writeHead("GET https://example.test/a?b=c", h))
	if first != "GET https://example.test/a?b=c" || !reflect.DeepEqual(got, h) {
		t.Fatalf("%q %v", first, got)
	}
	// A line break inside a value cannot start a header of its own.
	first, got = readHead(writeHead("OK", http.Header{"X-A": {"one\r\nX-Injected:yes"}}))
	if first != "OK" || !reflect.DeepEqual(got, http.Header{"X-A": {"one  X-Injected:yes"}}) {
		t.Fatalf("%q %v", first, got)
	}
	// The shim's lower-case names are canonicalized; a line without ':' is skipped.
	first, got = readHead("200 OK\ncontent-type:text/plain\nnonsense\nx-d1-bookmark:abc")
	if first != "200 OK" || !reflect.DeepEqual(got, http.Header{"Content-Type": {"text/plain"}, "X-D1-Bookmark": {"abc"}}) {
		t.Fatalf("%q %v", first, got)
	}
	if first, got = readHead("204 No Content"); first != "204 No Content" || len(got) != 0 {
		t.Fatalf("%q %v", first, got)
	}
}

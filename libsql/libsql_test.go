package libsql

import (
	"context"
	"strings"
	"testing"
)

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"libsql://db.turso.io": true, "https://db.example": true, "http://127.0.0.1:8080": true, "HTTP://X:1": true,
		"./data/rowcall.db": false, "file:/tmp/x.db": false, "": false, "ws://x": false,
	} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
}

func TestRedact(t *testing.T) {
	got := Redact("libsql://u:secretpw@db.turso.io?authToken=eyJsecret&tls=1")
	if strings.Contains(got, "secret") || !strings.Contains(got, "db.turso.io") {
		t.Fatalf("Redact: %s", got)
	}
}

func TestOpenRefusesNonURLs(t *testing.T) {
	_, err := Open(context.Background(), "./data/rowcall.db?authToken=topsecret")
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("err %v", err)
	}
}

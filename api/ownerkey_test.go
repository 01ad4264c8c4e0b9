package api

import (
	"net/http/httptest"
	"testing"
)

// OwnerKey is the one owner-key check (the API's and the worker's /stats).
func TestOwnerKey(t *testing.T) {
	keys := []string{"old-key", "new-key"} // a rotation: both valid
	for _, c := range []struct {
		secret string
		want   bool
	}{
		{"old-key", true}, {"new-key", true}, {"", false}, {"old-ke", false}, {"old-key ", false}, {"OLD-KEY", false},
	} {
		if got := OwnerKey(c.secret, keys); got != c.want {
			t.Errorf("OwnerKey(%q) = %v", c.secret, got)
		}
	}
	if OwnerKey("", []string{""}) {
		t.Error("an empty secret matched an empty key")
	}
	if OwnerKey("x", nil) {
		t.Error("no keys matched")
	}
	for _, c := range []struct {
		header, value string
		want          bool
	}{
		{"X-Terminal-Key", "new-key", true},
		{"Authorization", "Bearer new-key", true},
		{"Authorization", "bearer  old-key ", true},
		{"Authorization", "Basic new-key", false},
		{"X-Api-Key", "new-key", false},
	} {
		r := httptest.NewRequest("GET", "/stats", nil)
		r.Header.Set(c.header, c.value)
		if got := IsOwner(r, keys); got != c.want {
			t.Errorf("IsOwner(%s: %s) = %v", c.header, c.value, got)
		}
	}
}

package rowcall

import (
	"sync"
	"testing"
	"time"
)

// State is the one token-validity rule: revoked wins, expiry is at or before
// now, and a stored expiry that is not a time fails closed.
func TestTokenState(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		tok  Token
		want TokenState
	}{
		{Token{}, TokenLive},
		{Token{ExpiresAt: "2026-12-01T10:00:00.001Z"}, TokenLive},
		{Token{ExpiresAt: "2026-12-01T10:00:00.000Z"}, TokenExpired}, // at now: expired
		{Token{ExpiresAt: "2026-12-01T09:59:59.999Z"}, TokenExpired},
		{Token{ExpiresAt: "not a time"}, TokenExpired},
		{Token{RevokedAt: "2026-11-30T00:00:00.000Z"}, TokenRevoked},
		{Token{RevokedAt: "2026-11-30T00:00:00.000Z", ExpiresAt: "2026-01-01T00:00:00.000Z"}, TokenRevoked},
	} {
		if got := c.tok.State(now); got != c.want {
			t.Errorf("%+v at %s: %d, want %d", c.tok, now, got, c.want)
		}
	}
	// Sub-millisecond: the stored precision, as the old text comparison judged it.
	if got := (&Token{ExpiresAt: "2026-12-01T10:00:00.000Z"}).State(now.Add(-time.Microsecond)); got != TokenLive {
		t.Errorf("a microsecond before expiry: %d", got)
	}
}

// A scope answers alike on its first call (its lists) and on every later
// one (the sets it builds on the second), from goroutines at once too.
func TestScopeHoldsAlikeEveryCall(t *testing.T) {
	cases := []struct {
		key, category string
		want          bool
	}{
		{"PAY_REFUND", "payments", true}, // by key
		{"OTHER", "time", true},          // by category
		{"OTHER", "weather", false},
		{"OTHER", "", false},
		{"", "", false},
	}
	for round := range 3 {
		s := &Scope{Keys: []string{"PAY_REFUND", "PAY_CHARGE"}, Categories: []string{"time", "news"}}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range round + 1 {
					for _, c := range cases {
						if got := s.Holds(c.key, c.category); got != c.want {
							t.Errorf("Holds(%q, %q) = %v, want %v", c.key, c.category, got, c.want)
						}
					}
				}
			}()
		}
		wg.Wait()
	}
	every := &Scope{Categories: []string{"*"}}
	for range 3 {
		if !every.Holds("ANY", "") {
			t.Error(`a scope of category "*" does not hold a row`)
		}
	}
	var none *Scope
	if !none.Holds("ANY", "misc") {
		t.Error("a nil scope does not hold a row")
	}
}

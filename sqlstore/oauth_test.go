package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
)

// Racing authorization requests, as hosts sharing one database make them,
// store no more than a client's share and an address's share: each INSERT
// counts the requests waiting in the statement that stores.
func TestRacingOAuthRequestsKeepTheShares(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	b := rowcall.OAuthBounds{MaxPending: 200, PendingPerClient: 10, PendingPerAddress: 10}
	expires := time.Now().Add(time.Hour).UTC().Format(rowcall.Timestamp)
	race := func(client func(i int) string, remote func(i int) string) (stored int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Go(func() {
				q := rowcall.OAuthRequest{ID: fmt.Sprintf("ocr_%s_%s_%d", client(i), remote(i), i), ClientID: client(i), RedirectURI: "http://127.0.0.1/cb",
					CodeChallenge: "c", Resource: "r", ExpiresAt: expires, Remote: remote(i)}
				ok, err := s.CreateOAuthRequest(ctx, &q, b)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					stored++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return stored
	}
	if n := race(func(int) string { return "oc_one" }, func(i int) string { return fmt.Sprint("10.0.0.", i) }); n != 10 {
		t.Fatalf("one client from 40 addresses at once: %d stored, want 10", n)
	}
	if n := race(func(i int) string { return fmt.Sprint("oc_", i) }, func(int) string { return "10.9.9.9" }); n != 10 {
		t.Fatalf("40 clients from one address at once: %d stored, want 10", n)
	}
}

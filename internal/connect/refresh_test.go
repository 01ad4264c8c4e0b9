package connect

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testenv"
)

// rotating is a token endpoint that rotates refresh tokens (each is good for
// one use), and calls hold, if set, while it answers a refresh.
type rotating struct {
	mu   sync.Mutex
	next int
	live map[string]bool
	hold func()
}

func (p *rotating) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	if p.hold != nil {
		p.hold()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rt := r.PostForm.Get("refresh_token")
	w.Header().Set("Content-Type", "application/json")
	if !p.live[rt] {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return
	}
	delete(p.live, rt)
	p.next++
	nrt := fmt.Sprintf("rt-%d", p.next+1)
	p.live[nrt] = true
	fmt.Fprintf(w, `{"access_token":"at-%d","token_type":"Bearer","refresh_token":%q,"expires_in":3600}`, p.next+1, nrt)
}

func service(t *testing.T, url string, store rowcall.Connections) *Service {
	keys, err := ParseKeys("k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if err != nil {
		t.Fatal(err)
	}
	return &Service{Providers: map[string]*Provider{"idp": {AuthURL: url + "/auth", TokenURL: url + "/token", ClientID: "c"}},
		Keys: keys, Store: store, Base: func(context.Context) string { return "http://rowcall.test" }}
}

// TestDisconnectDuringRefresh: a holder disconnects (DELETE
// /api/connections/idp, or DELETE /api/tokens/{id}) while a call of theirs is
// refreshing the connection's expired access token. The connection stays
// deleted and the call stops with connection_required.
func TestDisconnectDuringRefresh(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	entered, release := make(chan struct{}), make(chan struct{})
	p := &rotating{live: map[string]bool{"rt-1": true}}
	p.hold = func() { close(entered); <-release }
	up := httptest.NewServer(p)
	defer up.Close()
	s := service(t, up.URL, store)
	if err := s.put(ctx, "tok_a", "idp", &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan *rowcall.Failure)
	go func() { _, f := s.Token(ctx, "tok_a", "idp"); done <- f }()
	<-entered
	if found, err := store.DeleteConnection(ctx, "tok_a", "idp"); err != nil || !found { // the holder's DELETE: 200 {"revoked":true}
		t.Fatalf("delete: %v %v", found, err)
	}
	close(release)
	f := <-done
	if c, err := store.GetConnection(ctx, "tok_a", "idp"); err == nil {
		t.Errorf("the connection the holder deleted is back (updated_at %s): later calls of tok_a keep acting on the holder's account", c.UpdatedAt)
	}
	if f == nil || !strings.HasPrefix(f.String(), "ERR:auth:connection_required:idp") {
		t.Errorf("the call that was refreshing answered %v; want ERR:auth:connection_required:idp", f)
	}
}

// TestRefreshAcrossHosts: two hosts share the database, each with its own
// refresh lock. Both read the connection expired and refresh it with the same
// refresh token, which the provider accepts once: it answers the second host
// after the first has stored what it got. The refused host uses those tokens.
func TestRefreshAcrossHosts(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	var arrived sync.WaitGroup
	arrived.Add(2)
	var n atomic.Int32
	oneReturned := make(chan struct{})
	p := &rotating{live: map[string]bool{"rt-1": true}}
	p.hold = func() {
		arrived.Done()
		arrived.Wait() // both hosts have read the expired connection
		if n.Add(1) == 2 {
			<-oneReturned
		}
	}
	up := httptest.NewServer(p)
	defer up.Close()
	hostA, hostB := service(t, up.URL, store), service(t, up.URL, store)
	if err := hostA.put(ctx, "tok_a", "idp", &oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		at   string
		fail *rowcall.Failure
	}
	answers := make(chan answer, 2)
	for _, h := range []*Service{hostA, hostB} {
		go func() { at, f := h.Token(ctx, "tok_a", "idp"); answers <- answer{at, f} }()
	}
	first := <-answers
	close(oneReturned)
	second := <-answers
	for _, a := range []answer{first, second} {
		if a.fail != nil || a.at != "at-2" {
			t.Errorf("a call on a live connection answered %q, %v; want the refreshed access token at-2", a.at, a.fail)
		}
	}
}

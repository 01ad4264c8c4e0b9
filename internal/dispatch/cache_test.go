package dispatch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
)

// lookCounter counts the store's looks at the event log, and says when one
// has been made.
type lookCounter struct {
	dispatch.Store
	mu    sync.Mutex
	looks int
	made  chan struct{}
}

func (s *lookCounter) LastEvent(ctx context.Context) (int64, error) {
	id, err := s.Store.LastEvent(ctx)
	s.mu.Lock()
	s.looks++
	s.mu.Unlock()
	s.made <- struct{}{}
	return id, err
}

func (s *lookCounter) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.looks
}

// A client's next call, made soon after its last one was answered, does not
// wait for a look at the event log: answering a call whose look is more than
// half of Fresh old starts the next look, and that look sees an edit made
// behind the dispatcher's back before it. The dispatcher's clock is the
// test's, so no timing is involved.
func TestNextCallFindsAFreshLook(t *testing.T) {
	d, _ := newDispatcher(t)
	store := sqlStore(d)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	t.Cleanup(up.Close)
	row := rowcall.Row{Key: "WHERE", Type: rowcall.TypeHTTP, Target: "GET " + up.URL + "/before", Content: "# WHAT: w", Enabled: 1}
	if _, err := store.Create(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	counter := &lookCounter{Store: d.Store, made: make(chan struct{}, 16)}
	d.Store = counter
	var mu sync.Mutex
	clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	d.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	at := func(us int) {
		mu.Lock()
		clock = time.Date(2026, 12, 1, 0, 0, 0, us*1000, time.UTC)
		mu.Unlock()
	}
	d.Fresh = time.Millisecond
	ctx := context.Background()
	call := func(name string, answering func()) (result string, looks int) {
		before := counter.count()
		res, err := d.Dispatch(ctx, dispatch.Request{Key: "WHERE", Actor: "t"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		looks = counter.count() - before // made by the call itself, before it ran
		answering()
		if err := res.Wait(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Result, looks
	}

	at(0)
	nothing := func() {}
	if _, looks := call("the first call", nothing); looks != 1 {
		t.Fatalf("the first call made %d looks at the event log, want 1", looks)
	}
	<-counter.made
	at(600) // within Fresh: no look; answered with the look 600 µs old, so the next one starts
	// An edit by another process lands while that call is being answered;
	// the look its answer starts sees it.
	edit := func() {
		if _, err := store.DB.Exec(`UPDATE directory SET target = replace(target, '/before', '/after') WHERE key = 'WHERE'`); err != nil {
			t.Fatal(err)
		}
	}
	if result, looks := call("a call 600 µs later", edit); looks != 0 || result != "HTTP 200:/before" {
		t.Fatalf("a call within Fresh made %d looks and answered %q", looks, result)
	}
	select {
	case <-counter.made:
	case <-time.After(10 * time.Second):
		t.Fatal("answering a call whose look was 600 µs old started no look at the event log")
	}
	at(1300) // past Fresh from the first look, within it from the one started at 600 µs
	result, looks := call("a call 1.3 ms after the first", nothing)
	if looks != 0 {
		t.Fatalf("a call 700 µs after the previous call's answer made %d looks at the event log before it ran, want 0 (the answer started one)", looks)
	}
	if result != "HTTP 200:/after" {
		t.Fatalf("the call after the edit answered %q, want the edited row's HTTP 200:/after", result)
	}
}

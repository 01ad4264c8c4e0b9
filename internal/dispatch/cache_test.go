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
	"github.com/rowcall/rowcall/sqlstore"
)

// lookCounter counts the looks at the event log calls make through the store.
type lookCounter struct {
	dispatch.Store
	mu    sync.Mutex
	looks int
}

func (s *lookCounter) LastEvent(ctx context.Context) (int64, error) {
	s.mu.Lock()
	s.looks++
	s.mu.Unlock()
	return s.Store.LastEvent(ctx)
}

func (s *lookCounter) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.looks
}

// A client's next call, made soon after its last one was answered, does not
// wait for a look at the event log: the receipt writer, idle once it has
// stored the call's receipt, makes the look when the last one is more than
// half of Fresh old (Dispatcher.LookAhead), and that look sees an edit made
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
	counter := &lookCounter{Store: d.Store}
	d.Store = counter
	idle := make(chan struct{}, 1)
	d.Receipts.(*sqlstore.ReceiptLog).OnIdle(func(head func(context.Context) (int64, error)) {
		d.LookAhead(head)
		idle <- struct{}{}
	})
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
	// call dispatches WHERE and returns its result and the looks it made
	// itself, once its receipt is stored and the writer has gone idle.
	call := func(name string) (result string, looks int) {
		before := counter.count()
		res, err := d.Dispatch(ctx, dispatch.Request{Key: "WHERE", Principal: rowcall.Principal{Actor: "t"}})
		if err == nil {
			err = res.Wait()
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		select {
		case <-idle:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the receipt writer did not go idle", name)
		}
		return res.Result, counter.count() - before
	}

	at(0)
	if _, looks := call("the first call"); looks != 1 {
		t.Fatalf("the first call made %d looks at the event log, want 1", looks)
	}
	// Another process edits the row. A call 600 µs after the first look
	// trusts it (within Fresh) and runs the row as it was; the writer, idle
	// after its receipt, looks again (the last look is over half of Fresh old).
	if _, err := store.DB.Exec(`UPDATE directory SET target = replace(target, '/before', '/after') WHERE key = 'WHERE'`); err != nil {
		t.Fatal(err)
	}
	at(600)
	if result, looks := call("a call 600 µs later"); looks != 0 || result != "HTTP 200:/before" {
		t.Fatalf("a call within Fresh made %d looks and answered %q", looks, result)
	}
	at(1300) // past Fresh from the first look, within it from the writer's
	result, looks := call("a call 1.3 ms after the first")
	if looks != 0 {
		t.Fatalf("a call 700 µs after the previous call's answer made %d looks at the event log before it ran, want 0 (the writer made one)", looks)
	}
	if result != "HTTP 200:/after" {
		t.Fatalf("the call after the edit answered %q, want the edited row's HTTP 200:/after", result)
	}
}

package dispatch_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/internal/testenv"
)

// Speculating callers never see a row older than the newest committed edit:
// eight callers dispatch an fn row over and over (every call speculates: Fresh
// 0) while its content is edited behind the dispatcher's back, as another host
// would; no call that began after the edit answers with the old content, no
// thrown-away run leaves a receipt, and the chain verifies.
func TestSpeculationSeesEveryEdit(t *testing.T) {
	d, _ := newDispatcher(t)
	withEcho(t, d)
	d.Speculate, d.Fresh = true, 0
	ctx := context.Background()
	if res, err := d.Dispatch(ctx, dispatch.Request{Key: "ECHO", Body: "a", Principal: rowcall.Principal{Actor: "t"}}); err != nil || res.Result != "a" {
		t.Fatalf("first call: %v %q", err, res.Result)
	}
	type call struct {
		start  time.Time
		result string
	}
	var (
		mu     sync.Mutex
		calls  []call
		edited time.Time
		wg     sync.WaitGroup
	)
	// The callers run until 50 calls have begun after the edit (or a minute,
	// on a machine too loaded for that): the test needs calls on both sides.
	var afterEdit atomic.Int64
	giveUp := time.Now().Add(time.Minute)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for afterEdit.Load() < 50 && time.Now().Before(giveUp) {
				start := time.Now()
				res, err := d.Dispatch(ctx, dispatch.Request{Key: "ECHO", Body: "a", Principal: rowcall.Principal{Actor: "t"}})
				if err == nil {
					err = res.Wait()
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				calls = append(calls, call{start, res.Result})
				if !edited.IsZero() && start.After(edited) {
					afterEdit.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := sqlStore(d).DB.Exec(`UPDATE directory SET content = ? WHERE key = 'ECHO'`, `["edited","$1"]`); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	edited = time.Now() // the edit is committed: every call from here on must see it
	mu.Unlock()
	wg.Wait()
	var after int
	for _, c := range calls {
		if c.start.After(edited) {
			after++
			if c.result != "edited a" {
				t.Fatalf("a call that began %v after the edit answered %q", c.start.Sub(edited), c.result)
			}
		} else if c.result != "a" && c.result != "edited a" {
			t.Fatalf("result %q", c.result)
		}
	}
	if after == 0 || len(calls)-after == 0 {
		t.Fatalf("%d calls before the edit and %d after: the test did not overlap the edit", len(calls)-after, after)
	}
	chain, err := sqlStore(d).Receipts(ctx, 0, 100000)
	if err != nil || len(chain) != len(calls)+1 {
		t.Fatalf("%d receipts for %d calls (%v)", len(chain), len(calls)+1, err)
	}
	_, keys := testenv.Signer(t)
	if err := testenv.Verify(keys, chain); err != nil {
		t.Fatal(err)
	}
	for _, rc := range chain {
		if rc.Key != "ECHO" || rc.Outcome != "ok" {
			t.Fatalf("receipt %s: key %s, outcome %s", rc.ID, rc.Key, rc.Outcome)
		}
	}
}

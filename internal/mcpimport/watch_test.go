package mcpimport

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// The background checks are bounded: however many notifications a server
// sends, one check of it runs at a time and one more follows; a server whose
// check failed is not checked again before its backoff.
func TestWatcherBounds(t *testing.T) {
	var running, most, calls atomic.Int64
	var fail atomic.Bool
	release := make(chan struct{}, 10)
	w := NewWatcher(func(ctx context.Context, server string) error {
		calls.Add(1)
		if n := running.Add(1); n > most.Load() {
			most.Store(n)
		}
		defer running.Add(-1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		if fail.Load() {
			return errors.New("the server is down")
		}
		return nil
	}, nil, 0)
	defer w.Close()
	idle := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		s := w.state["s"]
		return s != nil && !s.running && !s.again
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}

	for range 50 {
		w.Notify("s")
	}
	until("the first check", func() bool { return calls.Load() == 1 })
	release <- struct{}{}
	until("the one check that follows", func() bool { return calls.Load() == 2 })
	release <- struct{}{}
	until("the checks to end", idle)
	if calls.Load() != 2 || most.Load() != 1 {
		t.Fatalf("50 notifications ran %d checks, %d at once; want 2, 1", calls.Load(), most.Load())
	}

	fail.Store(true)
	w.Notify("s")
	release <- struct{}{}
	until("the failed check", func() bool { return idle() && calls.Load() == 3 })
	w.Notify("s")
	w.mu.Lock()
	s := w.state["s"]
	wait, deferred := time.Until(s.retryAt), s.timer != nil
	w.mu.Unlock()
	if calls.Load() != 3 || !deferred || wait < WatchBackoff-time.Second {
		t.Fatalf("after a failure: %d checks, deferred %v, backoff %v", calls.Load(), deferred, wait)
	}
}

package mcpimport

import (
	"context"
	"sync"
	"time"
)

// Backoff bounds of a server whose background check failed.
const (
	WatchBackoff    = 30 * time.Second
	WatchMaxBackoff = 30 * time.Minute
)

// Watcher runs the background drift checks of a host:
//
//	w := mcpimport.NewWatcher(check, servers, 15*time.Minute) // check: the sync `rowcall mcp sync` runs, for one server
//	runner := mcpcall.New(mcpcall.Config{OnToolsChanged: w.Notify, …})
//	defer w.Close()
//
// Notify checks a server now (it sent notifications/tools/list_changed);
// every `every` (0: never) each server servers lists is checked. At most one
// check of a server runs at once: a Notify during one runs one more after
// it, however many came. A server whose check failed is checked again only
// after a backoff that doubles from WatchBackoff up to WatchMaxBackoff, and
// resets once a check succeeds.
type Watcher struct {
	check   func(ctx context.Context, server string) error
	servers func(ctx context.Context) ([]string, error)
	// OnError is told each failed check (nil: nothing is told).
	OnError func(server string, err error)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	state  map[string]*watched
}

type watched struct {
	running, again bool
	failures       int
	retryAt        time.Time
	timer          *time.Timer
}

// NewWatcher starts a Watcher; Close stops it.
func NewWatcher(check func(ctx context.Context, server string) error, servers func(ctx context.Context) ([]string, error), every time.Duration) *Watcher {
	w := &Watcher{check: check, servers: servers, state: map[string]*watched{}}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if every > 0 {
		w.wg.Add(1)
		go w.tick(every)
	}
	return w
}

// tick checks every server the rows call, every d.
func (w *Watcher) tick(d time.Duration) {
	defer w.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		servers, err := w.servers(w.ctx)
		if err != nil && w.OnError != nil {
			w.OnError("", err)
		}
		for _, s := range servers {
			w.Notify(s)
		}
	}
}

// Notify checks server as soon as the bounds allow. It does not block.
func (w *Watcher) Notify(server string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return
	}
	s := w.state[server]
	if s == nil {
		s = &watched{}
		w.state[server] = s
	}
	if s.running {
		s.again = true
		return
	}
	if wait := time.Until(s.retryAt); wait > 0 {
		if s.timer == nil {
			s.timer = time.AfterFunc(wait, func() {
				w.mu.Lock()
				s.timer = nil
				w.mu.Unlock()
				w.Notify(server)
			})
		}
		return
	}
	s.running = true
	w.wg.Add(1)
	go w.run(server, s)
}

func (w *Watcher) run(server string, s *watched) {
	defer w.wg.Done()
	err := w.check(w.ctx, server)
	w.mu.Lock()
	s.running = false
	if err != nil && w.ctx.Err() == nil {
		s.failures++
		s.retryAt = time.Now().Add(min(WatchBackoff<<min(s.failures-1, 16), WatchMaxBackoff))
	} else {
		s.failures, s.retryAt = 0, time.Time{}
	}
	again := s.again
	s.again = false
	w.mu.Unlock()
	if err != nil && w.OnError != nil && w.ctx.Err() == nil {
		w.OnError(server, err)
	}
	if again {
		w.Notify(server)
	}
}

// Close stops the checks and waits for those running to end.
func (w *Watcher) Close() {
	w.mu.Lock()
	w.cancel()
	for _, s := range w.state {
		if s.timer != nil {
			s.timer.Stop()
		}
	}
	w.mu.Unlock()
	w.wg.Wait()
}

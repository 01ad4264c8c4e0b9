package vectors

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
)

// Lazy is an Embedder whose model loads in the background (the embedded
// encoder reads 28 MB of weights, and may first fetch them): until it has
// loaded, Embed answers ErrNotReady, so a host serves at once and ask ranks
// by words meanwhile; if it cannot load, Embed answers why, for good.
type Lazy struct {
	model rowcall.EmbedModel
	mu    sync.RWMutex
	e     rowcall.Embedder
	err   error
	done  chan struct{}
}

// Load starts open in the background and returns its Embedder-to-be, of
// model m. The outcome is logged.
func Load(m rowcall.EmbedModel, open func() (rowcall.Embedder, error)) *Lazy {
	l := &Lazy{model: m, done: make(chan struct{})}
	go func() {
		start := time.Now()
		e, err := open()
		l.mu.Lock()
		l.e, l.err = e, err
		l.mu.Unlock()
		close(l.done)
		if err != nil {
			slog.Warn("embeddings off: the model could not be loaded; ask ranks by words alone", "model", m.ID(), "err", err,
				"fix", "fetch the weights once with `go run ./internal/embed/use/fetch` (or --tarball FILE offline), or set --embed-provider off to rank by words alone without this warning")
			return
		}
		slog.Info("embeddings on", "model", m.ID(), "loaded_in", time.Since(start).Round(time.Millisecond))
	}()
	return l
}

// Wait blocks until the model has loaded or failed, and returns the failure.
func (l *Lazy) Wait(ctx context.Context) error {
	select {
	case <-l.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return l.err
}

// Model implements rowcall.Embedder.
func (l *Lazy) Model() rowcall.EmbedModel { return l.model }

// Embed implements rowcall.Embedder.
func (l *Lazy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	l.mu.RLock()
	e, err := l.e, l.err
	l.mu.RUnlock()
	switch {
	case err != nil:
		return nil, fmt.Errorf("vectors: the embedding model did not load: %w", err)
	case e == nil:
		return nil, ErrNotReady
	}
	return e.Embed(ctx, texts)
}

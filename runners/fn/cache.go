package fn

import (
	"context"
	"sync"

	"github.com/tetratelabs/wazero"
)

// compiled is one compiled module, shared by every call of its digest.
type compiled struct {
	digest string
	cm     wazero.CompiledModule
	memMin uint64 // initial memory pages the module declares

	ready   chan struct{} // closed once cm or err is set
	err     error
	users   int    // calls holding it; guarded by compiledCache.mu
	lastUse uint64 // guarded by compiledCache.mu
	evicted bool   // guarded by compiledCache.mu
}

// compiledCache keeps compiled modules by digest, compiling each once however
// many calls ask for it at the same time, and closing the least recently used
// beyond max once no call holds it.
type compiledCache struct {
	mu   sync.Mutex
	m    map[string]*compiled
	tick uint64
	max  int
}

func newCompiledCache(max int) *compiledCache {
	return &compiledCache{m: map[string]*compiled{}, max: max}
}

// acquire returns the compiled module for digest, compiling load()'s bytes with
// compile on a miss. The caller must release it.
func (c *compiledCache) acquire(ctx context.Context, digest string, load func() ([]byte, error),
	compile func(ctx context.Context, wasm []byte, into *compiled) error) (*compiled, error) {
	c.mu.Lock()
	c.tick++
	e, hit := c.m[digest]
	if !hit {
		e = &compiled{digest: digest, ready: make(chan struct{})}
		c.m[digest] = e
	}
	e.users++
	e.lastUse = c.tick
	c.mu.Unlock()

	if !hit {
		wasm, err := load()
		if err == nil {
			// Not tied to this call's context: other calls may be waiting on it.
			err = compile(context.WithoutCancel(ctx), wasm, e)
		}
		e.err = err
		close(e.ready)
		c.mu.Lock()
		if err != nil && c.m[digest] == e {
			delete(c.m, digest) // the next call tries again
		}
		c.evictLocked()
		c.mu.Unlock()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		c.release(e)
		return nil, ctx.Err()
	}
	if e.err != nil {
		c.release(e)
		return nil, e.err
	}
	return e, nil
}

// release gives back a module acquire returned.
func (c *compiledCache) release(e *compiled) {
	c.mu.Lock()
	e.users--
	closeNow := e.evicted && e.users == 0 && e.cm != nil
	c.mu.Unlock()
	if closeNow {
		e.cm.Close(context.Background())
	}
}

// evictLocked drops least recently used ready modules while there are more
// than max; one still in use is closed by its last release.
func (c *compiledCache) evictLocked() {
	for len(c.m) > c.max {
		var victim *compiled
		for _, e := range c.m {
			select {
			case <-e.ready:
			default:
				continue // still compiling
			}
			if victim == nil || e.lastUse < victim.lastUse {
				victim = e
			}
		}
		if victim == nil {
			return
		}
		delete(c.m, victim.digest)
		victim.evicted = true
		if victim.users == 0 && victim.cm != nil {
			go victim.cm.Close(context.Background())
		}
	}
}

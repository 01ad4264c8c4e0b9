package vectors

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
)

// Store is what Table and Indexer read and write: rows, the event log and the
// vectors table. sqlstore.Store implements it.
type Store interface {
	RowsByKey(ctx context.Context, keys []string) (map[string]rowcall.Row, error)
	AllRows(ctx context.Context, scope *rowcall.Scope, all bool) ([]rowcall.Row, error)
	LastEvent(ctx context.Context) (int64, error)   // the newest event but the vectors' (Indexer)
	NewestEvent(ctx context.Context) (int64, error) // the newest event, the vectors' too (Table)
	ChangedKeys(ctx context.Context, after, upto int64) ([]string, error)
	UpsertVectors(ctx context.Context, m rowcall.EmbedModel, vs []rowcall.Vector) (stored []string, err error)
	DeleteVectors(ctx context.Context, m rowcall.EmbedModel, keys []string) error
	Vectors(ctx context.Context, m rowcall.EmbedModel, keys []string) ([]rowcall.Vector, error)
}

// Table is the vector index of a host whose vectors live in its database (the
// embedded SQLite file, or libSQL): a Memory loaded from the vectors table on
// first use and kept current from the event log, as the dispatcher's row
// cache is. Each Nearest looks at the newest event id (at most once per
// Fresh, and at once after Touch); when it moved, the rows and vectors of the
// changed keys are read again, so a vector another host wrote, a deleted row
// and a row disabled or hidden are seen on the next ask.
type Table struct {
	Store Store
	Fresh time.Duration    // how long one look at the event log serves (0: every call looks)
	Now   func() time.Time // time.Now when nil

	mem     *Memory
	mu      sync.Mutex // one sync at a time
	model   string     // the model loaded
	cursor  int64      // the event id the memory is current to
	checked time.Time
	touched bool
}

// NewTable returns the index over store's vectors table.
func NewTable(store Store, fresh time.Duration) *Table {
	return &Table{Store: store, Fresh: fresh, mem: NewMemory()}
}

// Touch says this process changed rows or vectors: the next look reads the
// event log whatever Fresh says (directory.Service.Subscribe(t.Touch)).
func (t *Table) Touch() {
	t.mu.Lock()
	t.touched = true
	t.mu.Unlock()
}

// maxChanged is how many changed keys a sync reads one by one; past it the
// whole table is read again.
const maxChanged = 2000

// Sync brings the memory up to the newest event (within Fresh).
func (t *Table) Sync(ctx context.Context, m rowcall.EmbedModel) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	if t.model == m.ID() && !t.touched && t.Fresh > 0 && now.Sub(t.checked) < t.Fresh {
		return nil
	}
	last, err := t.Store.NewestEvent(ctx)
	if err != nil {
		return err
	}
	t.touched = false
	if t.model != m.ID() {
		if err := t.load(ctx, m); err != nil {
			return err
		}
		t.cursor, t.checked = last, now
		return nil
	}
	if last > t.cursor {
		keys, err := t.Store.ChangedKeys(ctx, t.cursor, last)
		if err != nil {
			return err
		}
		if len(keys) > maxChanged {
			err = t.load(ctx, m)
		} else {
			err = t.refresh(ctx, m, keys)
		}
		if err != nil {
			return err
		}
		t.cursor = last
	}
	t.checked = now
	return nil
}

// load reads every vector of m (after the event id was read, so what changes
// meanwhile is read again by the next sync).
func (t *Table) load(ctx context.Context, m rowcall.EmbedModel) error {
	vs, err := t.Store.Vectors(ctx, m, nil)
	if err != nil {
		return err
	}
	mem := NewMemory()
	mem.Upsert(ctx, m, vs)
	t.mem.mu.Lock()
	t.mem.models = mem.models
	t.mem.mu.Unlock()
	t.model = m.ID()
	return nil
}

// refresh reads the vectors of keys again: a key without a stored vector (or
// whose row is gone) leaves the memory.
func (t *Table) refresh(ctx context.Context, m rowcall.EmbedModel, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	vs, err := t.Store.Vectors(ctx, m, keys)
	if err != nil {
		return err
	}
	found := map[string]bool{}
	for _, v := range vs {
		found[v.Key] = true
	}
	var gone []string
	for _, k := range keys {
		if !found[k] {
			gone = append(gone, k)
		}
	}
	t.mem.Delete(ctx, m, gone)
	return t.mem.Upsert(ctx, m, vs)
}

// Upsert implements rowcall.VectorIndex: the table, then the memory with
// the vectors the table stored (a vector of a row's older version is not:
// Vector.Version; the memory keeps what the table keeps).
func (t *Table) Upsert(ctx context.Context, m rowcall.EmbedModel, vs []rowcall.Vector) error {
	if len(vs) == 0 {
		return nil
	}
	keys, err := t.Store.UpsertVectors(ctx, m, vs)
	if err != nil {
		return err
	}
	t.Touch()
	stored := make(map[string]bool, len(keys))
	for _, k := range keys {
		stored[k] = true
	}
	return t.mem.Upsert(ctx, m, slices.DeleteFunc(slices.Clone(vs), func(v rowcall.Vector) bool { return !stored[v.Key] }))
}

// Delete implements rowcall.VectorIndex.
func (t *Table) Delete(ctx context.Context, m rowcall.EmbedModel, keys []string) error {
	if err := t.Store.DeleteVectors(ctx, m, keys); err != nil {
		return err
	}
	t.Touch()
	return t.mem.Delete(ctx, m, keys)
}

// Nearest implements rowcall.VectorIndex, on the memory after a sync.
func (t *Table) Nearest(ctx context.Context, m rowcall.EmbedModel, q []float32, k int, f rowcall.VectorFilter) ([]rowcall.VectorHit, error) {
	if err := t.Sync(ctx, m); err != nil {
		return nil, err
	}
	return t.mem.Nearest(ctx, m, q, k, f)
}

// Scores implements Scorer.
func (t *Table) Scores(ctx context.Context, m rowcall.EmbedModel, q []float32, keys []string) (map[string]float64, error) {
	return t.mem.Scores(ctx, m, q, keys)
}

// Centroid implements Centroider: the mean of the vectors loaded.
func (t *Table) Centroid(m rowcall.EmbedModel) []float32 { return t.mem.Centroid(m) }

// Hashes implements Hasher: the text hash of each key's stored vector.
func (t *Table) Hashes(ctx context.Context, m rowcall.EmbedModel, keys []string) (map[string][32]byte, error) {
	if err := t.Sync(ctx, m); err != nil {
		return nil, err
	}
	out := map[string][32]byte{}
	for _, k := range keys {
		if h, ok := t.mem.Hash(m, k); ok {
			out[k] = h
		}
	}
	return out, nil
}

// Vector implements Hasher: key's stored vector.
func (t *Table) Vector(ctx context.Context, m rowcall.EmbedModel, key string) ([]float32, [32]byte, bool) {
	if err := t.Sync(ctx, m); err != nil {
		return nil, [32]byte{}, false
	}
	v, ok := t.mem.Vector(m, key)
	h, _ := t.mem.Hash(m, key)
	return v, h, ok
}

// Peek is Vector as this process last saw it, without a look at the event
// log: a write's own row, whose vector this process stored, is current
// here (Indexer.Begin tells an unchanged text by it).
func (t *Table) Peek(m rowcall.EmbedModel, key string) ([]float32, [32]byte, bool) {
	v, ok := t.mem.Vector(m, key)
	h, _ := t.mem.Hash(m, key)
	return v, h, ok
}

// Hasher is a vector index that knows which text each stored vector embeds:
// the embedding queue skips rows whose vector is current, and a write's
// similar_rows reuses a current vector.
type Hasher interface {
	Hashes(ctx context.Context, m rowcall.EmbedModel, keys []string) (map[string][32]byte, error)
	Vector(ctx context.Context, m rowcall.EmbedModel, key string) ([]float32, [32]byte, bool)
}

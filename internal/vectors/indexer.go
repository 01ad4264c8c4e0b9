package vectors

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
)

// Indexer keeps rows' vectors current: after a write commits it embeds the
// rows whose text (rowcall.EmbedText) has no current vector, in batches, and
// drops the vectors of deleted rows. It follows the event log, so it sees
// every write — this process's (Notify, from directory.Service.Subscribe),
// another host's on the same database (at the next pass, within Every), an
// import's thousand rows (embedded Batch at a time). Its first pass looks at
// every row: a new model, or vectors never made, re-embeds the directory in
// the background. A failed batch is retried at the next pass, after a pause
// that doubles up to a minute; the work queued is bounded by the directory
// (one entry per row, whatever the number of writes).
type Indexer struct {
	Embedder rowcall.Embedder
	Index    rowcall.VectorIndex
	Store    Store
	Batch    int           // rows per Embed call (16 when 0)
	Every    time.Duration // a pass at least this often, for other hosts' writes (5 s when 0)
	// Progress, when set, is told after each batch how many of a pass's rows
	// are embedded (rowcall reindex draws its bar with it).
	Progress func(done, todo int)
	// Force embeds every row on the next pass, current or not (reindex --force).
	Force bool

	mu       sync.Mutex
	wake     chan struct{}
	cursor   int64
	started  bool
	inflight map[string]chan struct{}
}

func (x *Indexer) init() {
	if x.wake == nil {
		x.wake = make(chan struct{}, 1)
		x.inflight = map[string]chan struct{}{}
	}
}

// Notify asks for a pass soon (it never blocks).
func (x *Indexer) Notify() {
	x.mu.Lock()
	x.init()
	x.mu.Unlock()
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// Run makes passes until ctx ends: at once, on each Notify, and every Every.
func (x *Indexer) Run(ctx context.Context) {
	x.mu.Lock()
	x.init()
	x.mu.Unlock()
	if l, ok := x.Embedder.(interface{ Wait(context.Context) error }); ok && l.Wait(ctx) != nil {
		return // the model did not load (logged): nothing to embed with
	}
	every := x.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	pause := time.Second
	for {
		if err := x.Pass(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("vectors: embedding rows failed; retrying", "err", err, "in", pause)
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, time.Minute)
			continue
		}
		pause = time.Second
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
		case <-tick.C:
		}
	}
}

// ErrNotReady is what an Embedder still loading its model answers; ask ranks
// by words meanwhile and the Indexer tries again.
var ErrNotReady = errors.New("vectors: the embedding model is still loading")

// Pass embeds what changed since the last pass (every row on the first), and
// returns the first error; what it did not finish, the next pass does.
func (x *Indexer) Pass(ctx context.Context) error {
	x.mu.Lock()
	x.init()
	first, cursor := !x.started, x.cursor
	x.mu.Unlock()
	last, err := x.Store.LastEvent(ctx)
	if err != nil {
		return err
	}
	if !first && last <= cursor && !x.Force {
		return nil
	}
	var rows []rowcall.Row
	if first || x.Force {
		if rows, err = x.Store.AllRows(ctx, nil, true); err != nil {
			return err
		}
	} else {
		keys, err := x.Store.ChangedKeys(ctx, cursor, last)
		if err != nil {
			return err
		}
		byKey, err := x.Store.RowsByKey(ctx, keys)
		if err != nil {
			return err
		}
		var gone []string
		for _, k := range keys {
			if r, ok := byKey[k]; ok {
				rows = append(rows, r)
			} else {
				gone = append(gone, k)
			}
		}
		if len(gone) > 0 {
			if err := x.Index.Delete(ctx, x.Embedder.Model(), gone); err != nil {
				return err
			}
		}
	}
	todo, err := x.stale(ctx, rows)
	if err != nil {
		return err
	}
	if err := x.embed(ctx, todo); err != nil {
		return err
	}
	x.mu.Lock()
	x.started, x.cursor, x.Force = true, last, false
	x.mu.Unlock()
	return nil
}

// stale returns the rows whose vector is missing or embeds other text.
func (x *Indexer) stale(ctx context.Context, rows []rowcall.Row) ([]rowcall.Row, error) {
	h, ok := x.Index.(Hasher)
	if !ok || x.Force {
		return rows, nil
	}
	m := x.Embedder.Model()
	keys := make([]string, len(rows))
	for i := range rows {
		keys[i] = rows[i].Key
	}
	have, err := h.Hashes(ctx, m, keys)
	if err != nil {
		return nil, err
	}
	var out []rowcall.Row
	for i := range rows {
		if cur, ok := have[rows[i].Key]; !ok || cur != rowcall.EmbedHash(m, rowcall.EmbedText(&rows[i])) {
			out = append(out, rows[i])
		}
	}
	return out, nil
}

// embed embeds rows Batch at a time and stores their vectors.
func (x *Indexer) embed(ctx context.Context, rows []rowcall.Row) error {
	batch := x.Batch
	if batch <= 0 {
		batch = 16
	}
	for start := 0; start < len(rows); start += batch {
		part := rows[start:min(start+batch, len(rows))]
		if _, err := x.embedRows(ctx, part); err != nil {
			return err
		}
		if x.Progress != nil {
			x.Progress(start+len(part), len(rows))
		}
	}
	return nil
}

// embedRows embeds rows (none in flight elsewhere: those are waited for
// instead) and stores their vectors, which it returns by key.
func (x *Indexer) embedRows(ctx context.Context, rows []rowcall.Row) (map[string][]float32, error) {
	x.mu.Lock()
	x.init()
	var mine []rowcall.Row
	var waits []chan struct{}
	done := make(chan struct{})
	for _, r := range rows {
		if ch, busy := x.inflight[r.Key]; busy {
			waits = append(waits, ch)
			continue
		}
		x.inflight[r.Key] = done
		mine = append(mine, r)
	}
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		for _, r := range mine {
			delete(x.inflight, r.Key)
		}
		x.mu.Unlock()
		close(done)
	}()
	out := map[string][]float32{}
	if len(mine) > 0 {
		m := x.Embedder.Model()
		texts := make([]string, len(mine))
		for i := range mine {
			texts[i] = rowcall.EmbedText(&mine[i])
		}
		vecs, err := x.Embedder.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(mine) {
			return nil, errors.New("vectors: the embedder returned a different number of vectors than texts")
		}
		vs := make([]rowcall.Vector, len(mine))
		for i := range mine {
			r := &mine[i]
			vs[i] = rowcall.Vector{Key: r.Key, TextHash: rowcall.EmbedHash(m, texts[i]), Values: vecs[i], Category: r.Category,
				Enabled: r.Enabled != 0, Visible: r.PlannerVisible != 0}
			out[r.Key] = vecs[i]
		}
		if err := x.Index.Upsert(ctx, m, vs); err != nil {
			return nil, err
		}
	}
	for _, ch := range waits {
		select {
		case <-ch:
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}

// Current returns r's vector as it is now: the stored one when it embeds r's
// text, else embedded at once (or, when a pass is embedding it, that one) and
// stored.
func (x *Indexer) Current(ctx context.Context, r *rowcall.Row) ([]float32, error) {
	m := x.Embedder.Model()
	if v, ok := stored(ctx, x.Index, m, r); ok {
		return v, nil
	}
	out, err := x.embedRows(ctx, []rowcall.Row{*r})
	if err != nil {
		return nil, err
	}
	if v, ok := out[r.Key]; ok {
		return v, nil
	}
	if v, ok := stored(ctx, x.Index, m, r); ok { // another pass embedded it
		return v, nil
	}
	return nil, errors.New("vectors: no current vector for " + r.Key)
}

// stored returns r's vector in idx when idx is a Hasher and the vector
// embeds r's text as it is now.
func stored(ctx context.Context, idx rowcall.VectorIndex, m rowcall.EmbedModel, r *rowcall.Row) ([]float32, bool) {
	h, ok := idx.(Hasher)
	if !ok {
		return nil, false
	}
	v, cur, ok := h.Vector(ctx, m, r.Key)
	return v, ok && cur == rowcall.EmbedHash(m, rowcall.EmbedText(r))
}

// Current is Indexer.Current for an index the platform keeps current itself
// (app.Platform.KeepsVectors: no Indexer): a row's stored vector when it
// embeds the row's text, else the text embedded now and not stored — the
// platform stores it after the write.
func Current(emb rowcall.Embedder, idx rowcall.VectorIndex) func(context.Context, *rowcall.Row) ([]float32, error) {
	return func(ctx context.Context, r *rowcall.Row) ([]float32, error) {
		m := emb.Model()
		if v, ok := stored(ctx, idx, m, r); ok {
			return v, nil
		}
		vs, err := emb.Embed(ctx, []string{rowcall.EmbedText(r)})
		if err != nil {
			return nil, err
		}
		if len(vs) != 1 {
			return nil, errors.New("vectors: the embedder returned no vector for " + r.Key)
		}
		return vs[0], nil
	}
}

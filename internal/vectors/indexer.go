package vectors

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/wake"
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
	wake     wake.Signal
	cursor   int64
	started  bool
	inflight map[string]chan struct{}
}

func (x *Indexer) init() {
	if x.inflight == nil {
		x.inflight = map[string]chan struct{}{}
	}
}

// Notify asks for a pass soon (it never blocks).
func (x *Indexer) Notify() { x.wake.Notify() }

// Run makes passes until ctx ends: at once, on each Notify, and every Every.
// Its embeddings are background work (rowcall.InBackground: the embedded
// encoder on one core), so the host's writes and asks keep the others.
func (x *Indexer) Run(ctx context.Context) {
	ctx = rowcall.InBackground(ctx)
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
		case <-x.wake.C():
			// Writes come in runs: one pass for the run's rows, not a
			// pass (its reads of the event log and the rows) per write
			// beside the writes still coming.
			select {
			case <-ctx.Done():
				return
			case <-time.After(settle):
			}
		case <-tick.C:
		}
	}
}

// settle is how long Run waits after a Notify before its pass, for the
// writes that follow (a row's vector is embedded that much later; a write
// that wants similar_rows embeds its row itself).
const settle = 10 * time.Millisecond

// ErrNotReady is what an Embedder still loading its model answers; ask ranks
// by words meanwhile and the Indexer tries again.
var ErrNotReady = errors.New("vectors: the embedding model is still loading")

// Pass embeds what changed since the last pass (every row on the first), and
// returns the first error; what it did not finish, the next pass does.
func (x *Indexer) Pass(ctx context.Context) error {
	x.mu.Lock()
	x.init()
	first, cursor, force := !x.started, x.cursor, x.Force
	x.mu.Unlock()
	last, err := x.Store.LastEvent(ctx)
	if err != nil {
		return err
	}
	if !first && last <= cursor && !force {
		return nil
	}
	var rows []rowcall.Row
	if first || force {
		if rows, err = x.Store.AllRows(ctx, nil, true); err != nil {
			return err
		}
	} else {
		keys, err := x.Store.ChangedKeys(ctx, cursor, last)
		if err != nil {
			return err
		}
		var gone []string
		if rows, gone, err = Current(ctx, x.Store, keys); err != nil {
			return err
		}
		if len(gone) > 0 {
			if err := x.Index.Delete(ctx, x.Embedder.Model(), gone); err != nil {
				return err
			}
		}
	}
	todo, err := x.stale(ctx, rows, force)
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

// Current reads the rows of keys as they are now, in one read (none for no
// keys): those that exist, in the order of keys, and the keys of those that
// do not. What a changed key's vector needs is decided from them, not from
// what the events say happened: a row the event log shows deleted may exist
// again, and one it shows written may be gone. The Indexer and the worker's
// sync of Vectorize (worker/vectorsync.go) both decide this way.
func Current(ctx context.Context, s interface {
	RowsByKey(ctx context.Context, keys []string) (map[string]rowcall.Row, error)
}, keys []string) (rows []rowcall.Row, gone []string, err error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	byKey, err := s.RowsByKey(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range keys {
		if r, ok := byKey[k]; ok {
			rows = append(rows, r)
		} else {
			gone = append(gone, k)
		}
	}
	return rows, gone, nil
}

// stale returns the rows whose vector is missing or embeds other text.
func (x *Indexer) stale(ctx context.Context, rows []rowcall.Row, force bool) ([]rowcall.Row, error) {
	h, ok := x.Index.(Hasher)
	if !ok || force {
		return rows, nil
	}
	m := x.Embedder.Model()
	if m.Dim == 0 && len(rows) > 0 {
		// An embedder that learns its dimension from its first answer (a
		// provider's): one text embedded first, so the stored vectors are
		// looked up under the model they were stored under, not all made again
		// at every start.
		var err error
		if m, _, err = x.embedTexts(ctx, []string{rowcall.EmbedText(&rows[0])}); err != nil {
			return nil, err
		}
	}
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
// instead, then embedded here if they are still not current) and stores
// their vectors, which it returns by key.
func (x *Indexer) embedRows(ctx context.Context, rows []rowcall.Row) (map[string][]float32, error) {
	mine, waits, waited, release := x.claim(rows)
	defer release()
	out := map[string][]float32{}
	if len(mine) > 0 {
		texts := make([]string, len(mine))
		for i := range mine {
			texts[i] = rowcall.EmbedText(&mine[i])
		}
		m, vecs, err := x.embedTexts(ctx, texts)
		if err != nil {
			return nil, err
		}
		vs := make([]rowcall.Vector, len(mine))
		for i := range mine {
			vs[i] = vectorOf(&mine[i], rowcall.EmbedHash(m, texts[i]), vecs[i])
			out[mine[i].Key] = vecs[i]
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
	// A write whose embedding was in flight may have failed, or its caller
	// gone before storing it: what is still not current is embedded here.
	var again []rowcall.Row
	for i := range waited {
		if _, ok := stored(ctx, x.Index, x.Embedder.Model(), &waited[i]); !ok {
			again = append(again, waited[i])
		}
	}
	if len(again) > 0 {
		more, err := x.embedRows(ctx, again)
		for k, v := range more {
			out[k] = v
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// claim marks the keys of rows as in flight here (mine) and returns the
// rows already in flight elsewhere (waited) with what to wait on; release
// lets the other queues and writes have mine again.
func (x *Indexer) claim(rows []rowcall.Row) (mine []rowcall.Row, waits []chan struct{}, waited []rowcall.Row, release func()) {
	x.mu.Lock()
	x.init()
	done := make(chan struct{})
	for _, r := range rows {
		if ch, busy := x.inflight[r.Key]; busy {
			waits, waited = append(waits, ch), append(waited, r)
			continue
		}
		x.inflight[r.Key] = done
		mine = append(mine, r)
	}
	x.mu.Unlock()
	var once sync.Once
	return mine, waits, waited, func() {
		once.Do(func() {
			x.mu.Lock()
			for _, r := range mine {
				delete(x.inflight, r.Key)
			}
			x.mu.Unlock()
			close(done)
		})
	}
}

// Embed embeds texts with emb and returns the model they are of: emb's as it
// is once it answered, since an embedder may learn its dimension from its
// first answer (a provider's without a configured one, internal/embed/openai),
// and a vector stored under the model read before would be under dimension 0,
// where no ask looks. Every caller that stores vectors takes the model from
// here.
func Embed(ctx context.Context, emb rowcall.Embedder, texts []string) (rowcall.EmbedModel, [][]float32, error) {
	vecs, err := emb.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = errors.New("vectors: the embedder returned a different number of vectors than texts")
	}
	return emb.Model(), vecs, err
}

// embedTexts is Embed: a background call (the queue's, from Run) on the
// background thread.
func (x *Indexer) embedTexts(ctx context.Context, texts []string) (m rowcall.EmbedModel, vecs [][]float32, err error) {
	embed := func() { m, vecs, err = Embed(ctx, x.Embedder, texts) }
	if rowcall.Background(ctx) {
		background(embed)
	} else {
		embed()
	}
	return m, vecs, err
}

func vectorOf(r *rowcall.Row, hash [32]byte, v []float32) rowcall.Vector {
	return rowcall.Vector{Key: r.Key, TextHash: hash, Version: r.Version, Values: v, Category: r.Category,
		Enabled: r.Enabled != 0, Visible: r.PlannerVisible != 0}
}

// Begin starts making r's vector beside r's write, for the write's
// similar_rows: the vector this process's index held for r's key before the
// write when it embeds r's text (Reused: a write that leaves the text as it
// was embeds nothing and is not checked), else the vector stored meanwhile
// for r's text (by the queue, once the write committed, or by another write),
// else r's text embedded now, in the foreground (the caller waits for it),
// with r's key in flight so the queue waits for this embedding rather than
// making its own. Pending.Keep stores the vector once the write committed; a
// write that failed stores nothing, and the queue embeds what its next pass
// finds not current.
//
// Whether the text is unchanged is told before Begin returns, so before the
// write: a look once the write is under way may find the vector the queue
// made of the new text after the commit, which is no sign that the text was
// there before (a busy machine's goroutine can start that late; the write's
// near copies were then never looked up).
func (x *Indexer) Begin(ctx context.Context, r *rowcall.Row) *Pending {
	m := x.Embedder.Model()
	text := rowcall.EmbedText(r)
	p := &Pending{model: m, hash: rowcall.EmbedHash(m, text), done: make(chan struct{})}
	if pk, ok := x.Index.(interface {
		Peek(rowcall.EmbedModel, string) ([]float32, [32]byte, bool)
	}); ok {
		if v, h, ok := pk.Peek(m, r.Key); ok && h == p.hash { // unchanged text: no look at the database
			p.vec, p.reused = v, true
			close(p.done)
			return p
		}
	}
	row := *r
	go func() {
		defer close(p.done)
		for {
			if v, ok := stored(ctx, x.Index, m, &row); ok {
				p.vec = v // made meanwhile: not a sign the text is unchanged, so the check runs
				return
			}
			mine, waits, _, release := x.claim([]rowcall.Row{row})
			if len(mine) == 0 { // a pass or another write is embedding it: wait, then look again
				release()
				select {
				case <-waits[0]:
					continue
				case <-ctx.Done():
					p.err = ctx.Err()
					return
				}
			}
			made, vecs, err := x.embedTexts(ctx, []string{text})
			if err != nil {
				release()
				p.err = err
				return
			}
			p.vec = vecs[0]
			hash := rowcall.EmbedHash(made, text) // p.hash is under the model as Begin read it
			p.keep = func(c *rowcall.Row) {
				defer release()
				if c == nil {
					return
				}
				if err := x.Index.Upsert(context.WithoutCancel(ctx), made, []rowcall.Vector{vectorOf(c, hash, p.vec)}); err != nil {
					slog.Warn("vectors: storing a written row's vector failed; the queue embeds it again", "key", c.Key, "err", err)
				}
			}
			return
		}
	}()
	return p
}

// Pending is a row's vector on its way (Indexer.Begin, or Begin where the
// platform keeps its vectors itself). Vector waits for it; Keep, which its
// caller must call once the write ended, stores it.
type Pending struct {
	model  rowcall.EmbedModel
	hash   [32]byte // EmbedHash of the text embedded
	done   chan struct{}
	vec    []float32
	err    error
	reused bool                         // vec was stored for the row's key before the write: its text is unchanged
	keep   func(committed *rowcall.Row) // stores vec for the committed row (nil: the write failed) and releases its key; nil when there is nothing to store
	once   sync.Once
	kept   chan struct{} // Keep's
}

// Vector returns the vector once it is made, or ctx's error when ctx ends
// first.
func (p *Pending) Vector(ctx context.Context) ([]float32, error) {
	select {
	case <-p.done:
		return p.vec, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Keep ends the pending vector: once it is made, it is stored for
// committed, the row as its write left it (nothing is stored when committed
// is nil, the write having failed, or when committed embeds other text than
// the one begun: the queue embeds it then). Keep returns at once, with a
// channel closed once that is done; later calls only return the channel.
func (p *Pending) Keep(committed *rowcall.Row) <-chan struct{} {
	if committed != nil && rowcall.EmbedHash(p.model, rowcall.EmbedText(committed)) != p.hash {
		committed = nil
	}
	p.once.Do(func() {
		p.kept = make(chan struct{})
		go func() {
			defer close(p.kept)
			<-p.done
			if p.keep != nil {
				p.keep(committed)
			}
		}()
	})
	return p.kept
}

// Reused reports, once Vector returned, whether the vector is the one the
// index held for the row's key before the write: the write leaves the
// embedded text as it was, so its near copies were reported to the text's
// first write and are not looked up again.
func (p *Pending) Reused() bool { return p.reused }

// Embeds reports whether the row r embeds the text this vector is of.
func (p *Pending) Embeds(r *rowcall.Row) bool {
	return rowcall.EmbedHash(p.model, rowcall.EmbedText(r)) == p.hash
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

// Begin is Indexer.Begin for an index the platform keeps current itself
// (app.Platform.KeepsVectors: no Indexer): a row's stored vector when it
// embeds the row's text, else the text embedded now and not stored — the
// platform stores it after the write.
func Begin(emb rowcall.Embedder, idx rowcall.VectorIndex) func(context.Context, *rowcall.Row) *Pending {
	return func(ctx context.Context, r *rowcall.Row) *Pending {
		m := emb.Model()
		text := rowcall.EmbedText(r)
		p := &Pending{model: m, hash: rowcall.EmbedHash(m, text), done: make(chan struct{})}
		row := *r
		go func() {
			defer close(p.done)
			if v, ok := stored(ctx, idx, m, &row); ok {
				p.vec, p.reused = v, true
				return
			}
			if _, vs, err := Embed(ctx, emb, []string{text}); err != nil {
				p.err = err
			} else {
				p.vec = vs[0]
			}
		}()
		return p
	}
}

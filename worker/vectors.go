package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/dot"
)

// Finding rows by meaning on the worker: Workers AI embeds (the AI binding),
// Vectorize stores and searches (the VECTORIZE binding). Both are reached
// through one shim helper that calls a method of a binding with JSON
// arguments and answers its result as JSON (vectors_js.go); everything else is
// plain Go, tested natively (vectors_test.go).
//
//	AI          [ai] binding = "AI": embeddings, model ROWCALL_EMBED_MODEL
//	            (default @cf/baai/bge-base-en-v1.5; ROWCALL_EMBED_DIM for a model
//	            rowcall does not know)
//	VECTORIZE   [[vectorize]] binding = "VECTORIZE": one cosine index per model,
//	            with metadata indexes on model, enabled, visible and category
//	            (docs/vectors.md)

// binder calls method of the request's binding named binding with args, each
// encoded as JSON, and returns the method's result as JSON.
type binder interface {
	call(ctx context.Context, binding, method string, args ...any) ([]byte, error)
}

// encodeArgs is a binding call's arguments as the shim's call helper takes
// them: a JSON array.
func encodeArgs(args []any) ([]byte, error) {
	if args == nil {
		args = []any{}
	}
	return json.Marshal(args)
}

// Binding names.
const (
	aiBinding        = "AI"
	vectorizeBinding = "VECTORIZE"
)

// defaultEmbedModel is the Workers AI model rows are embedded with unless
// ROWCALL_EMBED_MODEL names another.
const defaultEmbedModel = "@cf/baai/bge-base-en-v1.5"

// workersAIDims are the output dimensions of Workers AI's text-embedding
// models, from their model pages.
var workersAIDims = map[string]int{
	"@cf/baai/bge-small-en-v1.5": 384,
	"@cf/baai/bge-base-en-v1.5":  768,
	"@cf/baai/bge-large-en-v1.5": 1024,
	"@cf/baai/bge-m3":            1024,
}

// embedModel is the model ROWCALL_EMBED_MODEL and ROWCALL_EMBED_DIM name.
func embedModel(name, dim string) (rowcall.EmbedModel, error) {
	name = cmp.Or(strings.TrimSpace(name), defaultEmbedModel)
	m := rowcall.EmbedModel{Provider: "workers-ai", Name: name, Dim: workersAIDims[name]}
	if d := strings.TrimSpace(dim); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > maxVectorizeDim {
			return m, &rowcall.Error{Code: rowcall.EInternal, Message: fmt.Sprintf("ROWCALL_EMBED_DIM %q is not a dimension from 1 to %d", d, maxVectorizeDim),
				HowToFix: "set ROWCALL_EMBED_DIM to the number of dimensions the model's page gives, or remove it for a model rowcall knows"}
		}
		m.Dim = n
	}
	if m.Dim == 0 {
		return m, &rowcall.Error{Code: rowcall.EInternal, Message: "ROWCALL_EMBED_MODEL " + strconv.Quote(name) + " is not a Workers AI embedding model rowcall knows the dimension of",
			HowToFix: "set ROWCALL_EMBED_DIM to the model's output dimensions (its page on developers.cloudflare.com/workers-ai/models)"}
	}
	return m, nil
}

// aiBatch is how many texts one env.AI.run call embeds (the bge models'
// input schema: text is a string or an array of at most 100 strings).
const aiBatch = 100

// workersAI is a rowcall.Embedder on the AI binding:
//
//	env.AI.run(model, {text: [...], pooling: "cls"}) → {shape: [n, dim], data: [[...], ...]}
//
// bge models are asked for CLS pooling (the pooling they were trained with;
// Workers AI's default, mean, is kept only for compatibility and its vectors
// do not mix with CLS ones). Vectors are L2-normalised here whatever the
// service answers.
type workersAI struct {
	model rowcall.EmbedModel
	b     binder
}

var _ rowcall.Embedder = workersAI{}

func (w workersAI) Model() rowcall.EmbedModel { return w.model }

func (w workersAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += aiBatch {
		batch := texts[start:min(start+aiBatch, len(texts))]
		in := map[string]any{"text": batch}
		if strings.HasPrefix(w.model.Name, "@cf/baai/bge-") {
			in["pooling"] = "cls"
		}
		res, err := w.b.call(ctx, aiBinding, "run", w.model.Name, in)
		if err != nil {
			return nil, fmt.Errorf("workers ai: %s: %w", w.model.Name, err)
		}
		vs, err := decodeEmbeddings(res, len(batch), w.model.Dim)
		if err != nil {
			return nil, fmt.Errorf("workers ai: %s: %w", w.model.Name, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// remembered is an Embedder that keeps the vectors of the last texts it
// embedded: a row written is embedded for its similar_rows check and then by
// the sync after the write (vectorsync.go), and the second finds the first's
// vector here, so each write costs one Workers AI embedding. Vectors are
// keyed by the model and the text's hash (rowcall.EmbedHash).
type remembered struct {
	rowcall.Embedder
	seen *lru.Cache[[32]byte, []float32]
}

// rememberTexts is how many texts' vectors remembered keeps.
const rememberTexts = 256

func remember(e rowcall.Embedder) remembered {
	c, _ := lru.New[[32]byte, []float32](rememberTexts)
	return remembered{e, c}
}

func (r remembered) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m := r.Model()
	out := make([][]float32, len(texts))
	var todo []string
	var at []int
	for i, t := range texts {
		if v, ok := r.seen.Get(rowcall.EmbedHash(m, t)); ok {
			out[i] = v
			continue
		}
		todo, at = append(todo, t), append(at, i)
	}
	if len(todo) == 0 {
		return out, nil
	}
	vs, err := r.Embedder.Embed(ctx, todo)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(todo) {
		return nil, fmt.Errorf("asked for %d vectors, got %d", len(todo), len(vs))
	}
	for j, i := range at {
		out[i] = vs[j]
		r.seen.Add(rowcall.EmbedHash(m, todo[j]), vs[j])
	}
	return out, nil
}

// decodeEmbeddings reads {shape: [n, dim], data: [[...], ...]}, checks it
// holds n vectors of dim, and normalises each.
func decodeEmbeddings(res []byte, n, dim int) ([][]float32, error) {
	var r struct {
		Shape []int       `json:"shape"`
		Data  [][]float32 `json:"data"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("the answer is not {shape, data}: %w", err)
	}
	if len(r.Data) != n || (len(r.Shape) == 2 && (r.Shape[0] != n || r.Shape[1] != dim)) {
		return nil, fmt.Errorf("asked for %d vectors of %d, got shape %v with %d vectors", n, dim, r.Shape, len(r.Data))
	}
	for i, v := range r.Data {
		if len(v) != dim {
			return nil, fmt.Errorf("vector %d has %d dimensions, the model makes %d (ROWCALL_EMBED_DIM)", i, len(v), dim)
		}
		if !normalise(v) {
			return nil, fmt.Errorf("vector %d is zero", i)
		}
	}
	return r.Data, nil
}

// normalise scales v to unit length; false for a zero (or non-finite) vector.
func normalise(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := math.Sqrt(s)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return false
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return true
}

// Vectorize's limits (developers.cloudflare.com/vectorize/platform/limits).
const (
	maxVectorizeDim   = 1536 // dimensions per vector
	maxVectorID       = 64   // bytes in a vector id
	maxUpsertBatch    = 1000 // vectors per upsert() from a Worker
	maxTopK           = 100  // topK without values and metadata (20 with them)
	maxDeleteBatch    = 1000 // ids per deleteByIds()
	maxGetBatch       = 20   // ids per getByIds() here: each answer carries its values
	hashedIDPrefix    = "~"  // never starts a row key (rowcall.KeyRule)
	metadataKey       = "key"
	metadataModel     = "model"
	metadataEnabled   = "enabled"
	metadataVisible   = "visible"
	metadataCategory  = "category"
	metadataEmbedHash = "text_hash"
)

// vectorID is a row key's id in Vectorize: the key itself when it fits in
// 64 bytes, else "~" and the base64url SHA-256 of the key (44 bytes). A key
// never starts with "~", so the two never meet; the key itself is always in
// the vector's metadata, from which a hashed id is read back (getByIds).
func vectorID(key string) string {
	if len(key) <= maxVectorID {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hashedIDPrefix + base64.RawURLEncoding.EncodeToString(sum[:])
}

// vectorize is a rowcall.VectorIndex on the VECTORIZE binding (a cosine
// index, so a match's score is the cosine):
//
//	upsert([{id, values, metadata}])                      → {mutationId}
//	query(vector, {topK, returnMetadata: "none", filter}) → {count, matches: [{id, score}]}
//	getByIds([id, ...])                                   → [{id, values, metadata}]
//	deleteByIds([id, ...])                                → {mutationId}
//	describe()                                            → {dimensions, vectorCount, ...}
//
// One index serves one model. Every vector carries its model's ID in its
// metadata and every query filters on it, so vectors of two models never
// meet in one answer even when an index is reused; and before the first use
// of a model the index's dimensions are checked against it (describe), so a
// model that cannot fit the index is an error that names the fix rather than
// failed upserts. Vectorize applies writes asynchronously: a row written is
// found once the index has processed the mutation (seconds), and words find
// it meanwhile.
type vectorize struct {
	b binder

	mu      sync.Mutex
	checked map[string]bool // model IDs whose dimensions match the index
}

var _ rowcall.VectorIndex = (*vectorize)(nil)

func newVectorize(b binder) *vectorize { return &vectorize{b: b, checked: map[string]bool{}} }

// check verifies, once per model, that the index has the model's dimensions.
func (x *vectorize) check(ctx context.Context, m rowcall.EmbedModel) error {
	x.mu.Lock()
	ok := x.checked[m.ID()]
	x.mu.Unlock()
	if ok {
		return nil
	}
	res, err := x.b.call(ctx, vectorizeBinding, "describe")
	if err != nil {
		return fmt.Errorf("vectorize: describe: %w", err)
	}
	var info struct {
		Dimensions int `json:"dimensions"`
		Config     struct {
			Dimensions int `json:"dimensions"`
		} `json:"config"` // the legacy (V1) answer
	}
	if err := json.Unmarshal(res, &info); err != nil {
		return fmt.Errorf("vectorize: describe: %w", err)
	}
	dims := cmp.Or(info.Dimensions, info.Config.Dimensions)
	if dims != m.Dim {
		return &rowcall.Error{Code: rowcall.EInternal,
			Message: fmt.Sprintf("the Vectorize index bound as %s has %d dimensions; the embedding model %s makes %d", vectorizeBinding, dims, m.Name, m.Dim),
			HowToFix: fmt.Sprintf("create an index for the model (npx wrangler vectorize create %s --dimensions=%d --metric=cosine, and its metadata indexes: docs/vectors.md) and bind it as %s",
				indexName(m), m.Dim, vectorizeBinding)}
	}
	x.mu.Lock()
	x.checked[m.ID()] = true
	x.mu.Unlock()
	return nil
}

// indexName is the Vectorize index name docs/vectors.md gives a model:
// "rowcall-" and the model's name after its last "/", lower case, with dots
// as dashes (rowcall-bge-base-en-v1-5).
func indexName(m rowcall.EmbedModel) string {
	name := m.Name[strings.LastIndex(m.Name, "/")+1:]
	return "rowcall-" + strings.ToLower(strings.NewReplacer(".", "-", "_", "-", "@", "").Replace(name))
}

type vectorizeVector struct {
	ID       string         `json:"id"`
	Values   []float32      `json:"values,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func (x *vectorize) Upsert(ctx context.Context, m rowcall.EmbedModel, vs []rowcall.Vector) error {
	if len(vs) == 0 {
		return nil
	}
	if err := x.check(ctx, m); err != nil {
		return err
	}
	for start := 0; start < len(vs); start += maxUpsertBatch {
		batch := vs[start:min(start+maxUpsertBatch, len(vs))]
		out := make([]vectorizeVector, len(batch))
		for i, v := range batch {
			if len(v.Values) != m.Dim {
				return fmt.Errorf("vectorize: %s: a vector of %d dimensions for model %s (%d)", v.Key, len(v.Values), m.Name, m.Dim)
			}
			out[i] = vectorizeVector{ID: vectorID(v.Key), Values: v.Values, Metadata: map[string]any{
				metadataKey: v.Key, metadataModel: m.ID(), metadataEnabled: v.Enabled, metadataVisible: v.Visible,
				metadataCategory: v.Category, metadataEmbedHash: base64.RawURLEncoding.EncodeToString(v.TextHash[:]),
			}}
		}
		if _, err := x.b.call(ctx, vectorizeBinding, "upsert", out); err != nil {
			return fmt.Errorf("vectorize: upsert: %w", err)
		}
	}
	return nil
}

// Delete removes keys' vectors. An index holds one vector per row (ids are
// keys), so m names the index and needs no filter.
func (x *vectorize) Delete(ctx context.Context, m rowcall.EmbedModel, keys []string) error {
	for start := 0; start < len(keys); start += maxDeleteBatch {
		batch := keys[start:min(start+maxDeleteBatch, len(keys))]
		ids := make([]string, len(batch))
		for i, k := range batch {
			ids[i] = vectorID(k)
		}
		if _, err := x.b.call(ctx, vectorizeBinding, "deleteByIds", ids); err != nil {
			return fmt.Errorf("vectorize: deleteByIds: %w", err)
		}
	}
	return nil
}

// nearestFilter is the metadata filter of a query: the model, unless all
// only enabled, planner-visible rows, and when cats is set only rows of one
// of those categories.
func nearestFilter(m rowcall.EmbedModel, all bool, cats []string) map[string]any {
	f := map[string]any{metadataModel: map[string]any{"$eq": m.ID()}}
	if !all {
		f[metadataEnabled] = map[string]any{"$eq": true}
		f[metadataVisible] = map[string]any{"$eq": true}
	}
	if len(cats) > 0 {
		f[metadataCategory] = map[string]any{"$in": cats}
	}
	return f
}

// Nearest asks for at most 100 matches (Vectorize's topK without metadata)
// and reads the keys of hashed ids back from their metadata. f is applied in
// the index: a scope's categories are a metadata filter of the query, and
// its keys' vectors (Vectorize filters on no id) are read by id and scored
// here; the two are merged, best first.
func (x *vectorize) Nearest(ctx context.Context, m rowcall.EmbedModel, q []float32, k int, f rowcall.VectorFilter) ([]rowcall.VectorHit, error) {
	if k <= 0 {
		return nil, nil
	}
	if len(q) != m.Dim {
		return nil, fmt.Errorf("vectorize: a query of %d dimensions for model %s (%d)", len(q), m.Name, m.Dim)
	}
	if err := x.check(ctx, m); err != nil {
		return nil, err
	}
	want := k
	if f.Except != "" {
		want++ // the row itself may be among them
	}
	var hits []rowcall.VectorHit
	var err error
	switch s := f.Scope; {
	case s == nil || slices.Contains(s.Categories, "*"):
		hits, err = x.query(ctx, m, q, want, nearestFilter(m, f.All, nil))
	default:
		var cats []string
		for _, c := range s.Categories {
			if c != "" {
				cats = append(cats, c)
			}
		}
		if len(cats) > 0 {
			hits, err = x.query(ctx, m, q, want, nearestFilter(m, f.All, cats))
		}
		if err == nil && len(s.Keys) > 0 {
			var more []rowcall.VectorHit
			more, err = x.scored(ctx, m, q, s.Keys, f.All)
			hits = append(hits, more...)
		}
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hits, func(a, b rowcall.VectorHit) int {
		return cmp.Or(cmp.Compare(b.Cosine, a.Cosine), strings.Compare(a.Key, b.Key))
	})
	out := hits[:0]
	for i, h := range hits {
		if h.Key != f.Except && (i == 0 || h.Key != hits[i-1].Key) && len(out) < k {
			out = append(out, h)
		}
	}
	return out, nil
}

// query is one Vectorize query of the k nearest rows to q that filter
// passes, with hashed ids read back as keys.
func (x *vectorize) query(ctx context.Context, m rowcall.EmbedModel, q []float32, k int, filter map[string]any) ([]rowcall.VectorHit, error) {
	res, err := x.b.call(ctx, vectorizeBinding, "query", q,
		map[string]any{"topK": min(k, maxTopK), "returnValues": false, "returnMetadata": "none", "filter": filter})
	if err != nil {
		return nil, fmt.Errorf("vectorize: query: %w", err)
	}
	var r struct {
		Matches []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
		} `json:"matches"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("vectorize: query: the answer is not {count, matches}: %w", err)
	}
	hits := make([]rowcall.VectorHit, 0, len(r.Matches))
	var hashed []string
	for _, mt := range r.Matches {
		hits = append(hits, rowcall.VectorHit{Key: mt.ID, Cosine: mt.Score})
		if strings.HasPrefix(mt.ID, hashedIDPrefix) {
			hashed = append(hashed, mt.ID)
		}
	}
	if len(hashed) == 0 {
		return hits, nil
	}
	keys, err := x.keysOf(ctx, hashed)
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if strings.HasPrefix(h.Key, hashedIDPrefix) {
			k, ok := keys[h.Key]
			if !ok {
				continue // deleted since the query
			}
			h.Key = k
		}
		out = append(out, h)
	}
	return out, nil
}

// scored is the cosine of q with each of keys' vectors of model m (read by
// id), among the enabled, planner-visible ones unless all.
func (x *vectorize) scored(ctx context.Context, m rowcall.EmbedModel, q []float32, keys []string, all bool) ([]rowcall.VectorHit, error) {
	got, err := x.byKey(ctx, keys)
	if err != nil {
		return nil, err
	}
	var hits []rowcall.VectorHit
	for k, v := range got {
		if _, ok := v.hash(m, k); !ok || !all && (v.Metadata[metadataEnabled] != true || v.Metadata[metadataVisible] != true) {
			continue
		}
		vals, err := v.values()
		if err != nil || len(vals) != m.Dim {
			continue
		}
		c := []float32{0}
		dot.Scores(q, vals, m.Dim, c)
		hits = append(hits, rowcall.VectorHit{Key: k, Cosine: float64(c[0])})
	}
	return hits, nil
}

// stored is a vector as getByIds answers it, with its values as an array
// or, from a binding that answers a Float32Array (JSON.stringify makes that
// an object of indices), as that object.
type stored struct {
	ID       string          `json:"id"`
	Values   json.RawMessage `json:"values"`
	Metadata map[string]any  `json:"metadata"`
}

func (v stored) values() ([]float32, error) {
	var out []float32
	if err := json.Unmarshal(v.Values, &out); err == nil {
		return out, nil
	}
	var byIndex map[string]float32
	if err := json.Unmarshal(v.Values, &byIndex); err != nil {
		return nil, fmt.Errorf("vectorize: getByIds: %s: values are neither an array nor a Float32Array", v.ID)
	}
	out = make([]float32, len(byIndex))
	for k, x := range byIndex {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(out) {
			return nil, fmt.Errorf("vectorize: getByIds: %s: values have index %q", v.ID, k)
		}
		out[i] = x
	}
	return out, nil
}

// hash is the text hash in v's metadata, when v is key's vector of model m.
func (v stored) hash(m rowcall.EmbedModel, key string) ([32]byte, bool) {
	var h [32]byte
	if v.Metadata[metadataModel] != m.ID() || v.Metadata[metadataKey] != key {
		return h, false
	}
	s, _ := v.Metadata[metadataEmbedHash].(string)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, false
	}
	copy(h[:], b)
	return h, true
}

// getByIds reads the vectors of ids, maxGetBatch a call.
func (x *vectorize) getByIds(ctx context.Context, ids []string) ([]stored, error) {
	var out []stored
	for start := 0; start < len(ids); start += maxGetBatch {
		res, err := x.b.call(ctx, vectorizeBinding, "getByIds", ids[start:min(start+maxGetBatch, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("vectorize: getByIds: %w", err)
		}
		var got []stored
		if err := json.Unmarshal(res, &got); err != nil {
			return nil, fmt.Errorf("vectorize: getByIds: %w", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// byKey reads the vectors of keys, by key.
func (x *vectorize) byKey(ctx context.Context, keys []string) (map[string]stored, error) {
	ids := make([]string, len(keys))
	key := make(map[string]string, len(keys))
	for i, k := range keys {
		ids[i] = vectorID(k)
		key[ids[i]] = k
	}
	got, err := x.getByIds(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]stored, len(got))
	for _, v := range got {
		if k, ok := key[v.ID]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// Hashes implements vectors.Hasher: the text hashes of keys' vectors of
// model m (the reindex embeds only rows whose text changed).
func (x *vectorize) Hashes(ctx context.Context, m rowcall.EmbedModel, keys []string) (map[string][32]byte, error) {
	got, err := x.byKey(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string][32]byte, len(got))
	for k, v := range got {
		if h, ok := v.hash(m, k); ok {
			out[k] = h
		}
	}
	return out, nil
}

// Vector implements vectors.Hasher: key's vector of model m and the hash of
// the text it embeds (a row's neighbour list starts from it).
func (x *vectorize) Vector(ctx context.Context, m rowcall.EmbedModel, key string) ([]float32, [32]byte, bool) {
	got, err := x.byKey(ctx, []string{key})
	if err != nil {
		return nil, [32]byte{}, false
	}
	v, ok := got[key]
	if !ok {
		return nil, [32]byte{}, false
	}
	h, ok := v.hash(m, key)
	if !ok {
		return nil, h, false
	}
	vals, err := v.values()
	if err != nil || len(vals) != m.Dim {
		return nil, h, false
	}
	return vals, h, true
}

// keysOf reads the row keys of hashed ids from their vectors' metadata.
func (x *vectorize) keysOf(ctx context.Context, ids []string) (map[string]string, error) {
	got, err := x.getByIds(ctx, ids)
	if err != nil {
		return nil, err
	}
	keys := make(map[string]string, len(ids))
	for _, v := range got {
		if k, ok := v.Metadata[metadataKey].(string); ok && vectorID(k) == v.ID {
			keys[v.ID] = k
		}
	}
	return keys, nil
}

// nearestRequest is POST /_worker/nearest's body (ROWCALL_WORKER_DEBUG=1, the
// owner key): the adapters themselves, below any ranking, for tests in
// workerd.
type nearestRequest struct {
	Text string `json:"text"`
	K    int    `json:"k"`
	All  bool   `json:"all"`
}

// nearest embeds q.Text and asks idx for its q.K nearest rows.
func nearest(ctx context.Context, emb rowcall.Embedder, idx rowcall.VectorIndex, q nearestRequest) (map[string]any, error) {
	vs, err := emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, err
	}
	hits, err := idx.Nearest(ctx, emb.Model(), vs[0], cmp.Or(q.K, 5), rowcall.VectorFilter{All: q.All})
	if err != nil {
		return nil, err
	}
	return map[string]any{"model": emb.Model().ID(), "hits": hits}, nil
}

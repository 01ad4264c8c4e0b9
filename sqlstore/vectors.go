package sqlstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"

	"github.com/rowcall/rowcall"
)

// Rows' embeddings (migrations/0011_vectors.sql): one vector per row and
// model, with the hash of the text it embeds. Package internal/vectors keeps
// an in-memory index over them.

// UpsertVectors stores vs as model's vectors (replacing a key's older one),
// in statements under D1's bound-parameter limit. A vector with a Version is
// stored only while its row is at that version, in the same statement: one
// embedded from a row's older text, ending after the newer text's vector was
// stored, is dropped (the row's newer write has its own). It returns the keys
// whose vectors were stored.
func (s *Store) UpsertVectors(ctx context.Context, model rowcall.EmbedModel, vs []rowcall.Vector) ([]string, error) {
	const cols = 7
	per := max(1, s.maxParams()/cols)
	now := s.now()
	var stored []string
	for start := 0; start < len(vs); start += per {
		batch := vs[start:min(start+per, len(vs))]
		values := make([]string, len(batch))
		args := make([]any, 0, len(batch)*cols)
		for i, v := range batch {
			values[i] = "(?,?,?,?,?,?,?)"
			args = append(args, v.Key, model.ID(), len(v.Values), v.TextHash[:], VectorBlob(v.Values), now, v.Version)
		}
		q := `INSERT INTO vectors (key, model, dim, text_sha256, vector, updated_at)
			SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6 FROM (VALUES ` + strings.Join(values, ",") + `) AS v
			WHERE v.column7 = 0 OR EXISTS (SELECT 1 FROM directory d WHERE d.key = v.column1 AND d.version = v.column7)
			ON CONFLICT (model, key) DO UPDATE SET dim = excluded.dim, text_sha256 = excluded.text_sha256,
			vector = excluded.vector, updated_at = excluded.updated_at
			RETURNING key`
		keys, err := queryAll(ctx, s, func(sc scanner) (key string, err error) { return key, sc.Scan(&key) }, q, args...)
		if err != nil {
			return stored, err
		}
		stored = append(stored, keys...)
	}
	return stored, nil
}

// DeleteVectors removes model's vectors of keys.
func (s *Store) DeleteVectors(ctx context.Context, model rowcall.EmbedModel, keys []string) error {
	list, _ := json.Marshal(keys)
	_, err := s.DB.ExecContext(ctx, `DELETE FROM vectors WHERE model = ? AND key IN (SELECT value FROM json_each(?))`, model.ID(), string(list))
	return err
}

// Vectors returns model's stored vectors of keys (every one when keys is nil),
// each with its row's category, enabled and planner_visible. A vector whose
// row is gone is not returned.
func (s *Store) Vectors(ctx context.Context, model rowcall.EmbedModel, keys []string) ([]rowcall.Vector, error) {
	q := `SELECT v.key, v.text_sha256, v.vector, COALESCE(d.category, ''), COALESCE(d.enabled, 1), COALESCE(d.planner_visible, 1)
		FROM vectors v JOIN directory d ON d.key = v.key WHERE v.model = ? AND v.dim = ?`
	args := []any{model.ID(), model.Dim}
	if keys != nil {
		list, _ := json.Marshal(keys)
		q += ` AND v.key IN (SELECT value FROM json_each(?))`
		args = append(args, string(list))
	}
	return queryAll(ctx, s, func(sc scanner) (rowcall.Vector, error) {
		var v rowcall.Vector
		var hash, blob []byte
		var enabled, visible int64
		if err := sc.Scan(&v.Key, &hash, &blob, &v.Category, &enabled, &visible); err != nil {
			return v, err
		}
		copy(v.TextHash[:], hash)
		v.Values, v.Enabled, v.Visible = VectorValues(blob), enabled != 0, visible != 0
		return v, nil
	}, q, args...)
}

// ChangedKeys returns the keys of rows and vectors with events after the
// event id after, up to and including upto, in the order of their last such
// event: what an in-memory index or the embedding queue must look at again.
func (s *Store) ChangedKeys(ctx context.Context, after, upto int64) ([]string, error) {
	return s.eventKeys(ctx, after, upto, `'DIRECTORY_MUTATE', 'VECTOR'`)
}

// WrittenKeys is ChangedKeys for rows alone (their writes, not their
// vectors'): what the expansion of rows (package expand) looks at.
func (s *Store) WrittenKeys(ctx context.Context, after, upto int64) ([]string, error) {
	return s.eventKeys(ctx, after, upto, `'DIRECTORY_MUTATE'`)
}

// eventKeys returns the keys of events of kinds (an SQL list of constants)
// after the event id after, up to and including upto, in the order of their
// last such event.
func (s *Store) eventKeys(ctx context.Context, after, upto int64, kinds string) ([]string, error) {
	return queryAll(ctx, s, func(sc scanner) (k string, err error) { return k, sc.Scan(&k) },
		`SELECT key FROM events WHERE id > ? AND id <= ? AND kind IN (`+kinds+`) GROUP BY key ORDER BY max(id)`, after, upto)
}

// VectorBlob is v as the vectors table stores it: little-endian float32s
// (libSQL's F32_BLOB layout).
func VectorBlob(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// VectorValues reads a VectorBlob.
func VectorValues(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/rowcall/rowcall"
)

// D1's limits, which every bulk write keeps on every backend.
const (
	MaxParams    = 100     // bound parameters per statement
	MaxStatement = 100_000 // bytes of SQL text per statement
)

// upsertColumns are written by Upsert, in order; created_at only on insert.
var upsertColumns = []string{"key", "type", "target", "auth", "content", "updated_at", "category", "allowed_categories",
	"seq", "enabled", "planner_visible", "planner_rank", "input_schema", "examples", "sensitive", "runner", "includes", "created_at", "imported_from", "approval", "output_schema", "written_by"}

// RowsByKey returns the stored rows among keys.
func (s *Store) RowsByKey(ctx context.Context, keys []string) (map[string]rowcall.Row, error) {
	list, _ := json.Marshal(keys)
	rows, err := s.DB.QueryContext(ctx, `SELECT `+columns+` FROM directory WHERE key IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]rowcall.Row{}
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		out[r.Key] = r
	}
	return out, rows.Err()
}

// compactAfter is the size of a bulk write after which Upsert merges the
// word index into one segment (compactSearch).
const compactAfter = 256

// Upsert writes rows, creating new keys and replacing existing ones (version
// bumped, created_at kept), in multi-row statements that stay under D1's
// bound-parameter and statement-size limits. Each statement is atomic; the
// triggers log every row's event. A write of compactAfter rows or more then
// merges the word index (compactSearch).
func (s *Store) Upsert(ctx context.Context, rows []rowcall.Row) error {
	if err := s.withinQuota(ctx, rows); err != nil {
		return err
	}
	per := MaxParams / len(upsertColumns)
	now := s.now()
	set := make([]string, 0, len(upsertColumns))
	for _, c := range upsertColumns[1:] {
		switch c {
		case "created_at":
		case "imported_from": // a write that names no import keeps the row's
			set = append(set, c+" = COALESCE(excluded."+c+", directory."+c+")")
		default:
			set = append(set, c+" = excluded."+c)
		}
	}
	tail := ` ON CONFLICT (key) DO UPDATE SET ` + strings.Join(set, ", ") + `, version = directory.version + 1`
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(upsertColumns)), ",") + ")"
	for start := 0; start < len(rows); start += per {
		batch := rows[start:min(start+per, len(rows))]
		values := make([]string, len(batch))
		args := make([]any, 0, len(batch)*len(upsertColumns))
		for i, r := range batch {
			values[i] = one
			args = append(args, r.Key, string(r.Type), nullable(r.Target), nullable(r.Auth), nullable(r.Content), now,
				nullable(r.Category), nullable(r.AllowedCategories), seqArg(r.Seq), r.Enabled, r.PlannerVisible, r.PlannerRank,
				nullable(r.InputSchema), nullable(r.Examples), r.Sensitive, nullable(r.Runner), nullable(r.Includes), now, nullable(r.ImportedFrom), r.Approval, nullable(r.OutputSchema), nullable(r.WrittenBy))
		}
		q := `INSERT INTO directory (` + strings.Join(upsertColumns, ", ") + `) VALUES ` + strings.Join(values, ", ") + tail
		if len(q) > MaxStatement {
			panic("sqlstore: upsert statement over D1's size limit") // cannot happen: the text is parameters only
		}
		if _, err := s.DB.ExecContext(ctx, q, args...); err != nil {
			return quotaError(err)
		}
	}
	if len(rows) >= compactAfter {
		s.compactSearch(ctx)
	}
	return nil
}

// withinQuota refuses, before anything is written, a bulk write whose new
// keys would take the directory past its rows quota: the quota's trigger
// would stop it only at the statement that crosses it, after the ones before
// had landed.
func (s *Store) withinQuota(ctx context.Context, rows []rowcall.Row) error {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	list, _ := json.Marshal(keys)
	var over sql.NullBool // NULL: no quota
	err := s.DB.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM directory) + (SELECT COUNT(DISTINCT value) FROM json_each(?) WHERE value NOT IN (SELECT key FROM directory))
		> (SELECT value FROM quotas WHERE name = 'rows')`, string(list)).Scan(&over)
	if err != nil {
		return err
	}
	if over.Bool {
		return quotaError(errors.New("quota_exceeded:rows"))
	}
	return nil
}

// compactSearch merges the FTS5 index that ask reads into one segment.
// Every statement that writes rows leaves a segment of its own (five rows a
// statement under D1's parameter limit), FTS5's automerge keeps only their
// number down, and a MATCH pays a seek in every segment: at 10,000 imported
// rows one segment costs the word search 0.66-0.72x the CPU of the 17 a bulk
// import left (docs/benchmarks.md, "Ask"). The rows are
// stored either way, so a failure is logged, not returned.
func (s *Store) compactSearch(ctx context.Context) {
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO directory_fts(directory_fts) VALUES ('optimize')`); err != nil {
		slog.Warn("the word index was not merged after a bulk write; ask still works, a little slower", "err", err)
	}
}

package sqlstore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// A database whose receipts were written before migration 0016 (hashes as
// hex text, the signature as base64, the batch as JSON, a receipts_seq index)
// migrates to the smaller rows: the old rows read back exactly as they were,
// new receipts chain on from them stored as bytes, and the whole chain, old
// and new, exports and verifies.
func TestReceiptRowsAcrossMigration(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "rowcall.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.List(ctx, db); err != nil { // creates the ledger
		t.Fatal(err)
	}
	for _, name := range migrations.Names() {
		if name >= "0016" {
			break
		}
		text, _ := migrations.SQL(name)
		if _, err := db.Exec(text); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := db.Exec(`INSERT INTO d1_migrations (name) VALUES (?)`, name); err != nil {
			t.Fatal(err)
		}
	}

	// Today's writer also stores a receipt's approval (0019) and person
	// (0027), and looks at the chain's turn (0028): give the old table those
	// columns, which 0016 leaves behind and 0019 and 0027 add again, and the
	// turn's table, dropped below before 0028 makes it again.
	if _, err := db.Exec(`ALTER TABLE receipts ADD COLUMN approval TEXT; ALTER TABLE receipts ADD COLUMN approver TEXT;
		ALTER TABLE receipts ADD COLUMN person_iss TEXT; ALTER TABLE receipts ADD COLUMN person_sub TEXT`); err != nil {
		t.Fatal(err)
	}
	turn, _ := migrations.SQL("0028_receipt_turn.sql")
	if _, err := db.Exec(turn); err != nil {
		t.Fatal(err)
	}
	// The old chain: signed by the writer, then stored as rowcall stored
	// receipts before 0016 (every value text).
	store := sqlstore.New(db)
	store.MaxParams = 32766
	const old, more = 300, 200
	appendAll(t, testenv.Receipts(t, store), 0, old)
	before, err := store.Receipts(ctx, 0, old)
	if err != nil || len(before) != old {
		t.Fatalf("%d receipts, %v", len(before), err)
	}
	// Some receipt was signed in a group of more than one, so its batch path
	// is carried over (which receipt depends on how the writer grouped them).
	if !slices.ContainsFunc(before, func(r rowcall.Receipt) bool { return r.Batch != nil && len(r.Batch.Path) > 0 }) {
		t.Fatal("the old chain has no batch paths to carry over")
	}
	if _, err := db.Exec(`DELETE FROM receipts; DROP TABLE receipt_turn`); err != nil {
		t.Fatal(err)
	}
	for _, r := range before {
		batch, _ := json.Marshal(r.Batch)
		if _, err := db.Exec(`INSERT INTO receipts (id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape,
			cost_usd, upstream_status, outcome, input_sha256, output_sha256, contract_sha256, token_id, seq, prev_sha256, sha256, sig, key_id, batch)
			VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Trace, r.Actor, r.Key, string(r.Type), r.Runner, r.StartedAt, r.Millis, r.OK, r.Material, r.Shape, r.CostUSD, r.Status,
			r.Outcome, r.Input, r.Output, r.Contract, r.Seq, r.Prev, r.SHA256, r.Sig, r.KeyID, string(batch)); err != nil {
			t.Fatal(err)
		}
	}
	// A receipt from before the chain (0006) had no seq and no signature.
	if _, err := db.Exec(`INSERT INTO receipts (id, trace, actor, key, type, runner, started_at, duration_ms, ok, material, outcome,
		input_sha256, output_sha256, contract_sha256) VALUES ('inv_prechain', 't_old', 'owner', 'K', 'fn', 'fn', '2025-01-01T00:00:00.000Z', 1, 1, 1, 'ok', 'a', 'b', 'c')`); err != nil {
		t.Fatal(err)
	}

	if applied, err := migrations.Apply(ctx, db); err != nil || len(applied) == 0 || !strings.HasPrefix(applied[0], "0016") {
		t.Fatalf("applied %v: %v", applied, err)
	}
	var indexes []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'receipts' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		indexes = append(indexes, n)
	}
	rows.Close()
	if want := []string{"receipts_token_started", "receipts_trace", "sqlite_autoindex_receipts_1"}; !reflect.DeepEqual(indexes, want) {
		t.Errorf("receipts' indexes after 0016: %v, want %v (seq is the rowid)", indexes, want)
	}

	// New receipts chain on from the old head, stored as bytes.
	appendAll(t, testenv.Receipts(t, store), old, more)
	after, err := store.Receipts(ctx, 0, old+more+10)
	if err != nil || len(after) != old+more {
		t.Fatalf("%d receipts after the migration, want %d: %v", len(after), old+more, err)
	}
	if !reflect.DeepEqual(after[:old], before) {
		t.Error("the receipts written before 0016 read back changed")
	}
	_, keys := testenv.Signer(t)
	if c := exported(t, store, keys, 64); c.Count() != old+more {
		t.Errorf("verified %d receipts, want %d", c.Count(), old+more)
	}
	for seq, want := range map[int64]string{1: "text text text text", old + more: "blob blob blob blob"} {
		var got string
		db.QueryRow(`SELECT typeof(input_sha256) || ' ' || typeof(sha256) || ' ' || typeof(sig) || ' ' || typeof(batch) FROM receipts WHERE seq = ?`, seq).Scan(&got)
		if got != want {
			t.Errorf("receipt %d's input_sha256, sha256, sig and batch are stored as %q, want %q", seq, got, want)
		}
	}
	var hashBytes int
	db.QueryRow(`SELECT length(sha256) FROM receipts WHERE seq = ?`, old+more).Scan(&hashBytes)
	if hashBytes != 32 {
		t.Errorf("a new receipt's sha256 is %d bytes, want 32", hashBytes)
	}
	pre, err := store.Receipt(ctx, "inv_prechain")
	if err != nil || pre.Seq != 0 || pre.Input != "a" || pre.SHA256 != "" {
		t.Errorf("the receipt from before the chain: seq %d input %q sha256 %q, %v; want seq 0, as stored", pre.Seq, pre.Input, pre.SHA256, err)
	}
	if got, err := store.Receipt(ctx, after[old+more-1].ID); err != nil || !reflect.DeepEqual(got, after[old+more-1]) {
		t.Errorf("confirm of a new receipt: %+v, %v", got, err)
	}
}

// What is not hex or base64 (a value written by hand, a tamper test's) is
// stored and read back as the text it is.
func TestReceiptRowsKeepOddValues(t *testing.T) {
	ctx := context.Background()
	store, log, _ := newLog(t)
	rc := receipt()
	rc.Input, rc.Output, rc.Contract = "ABCDEF", "abc", "forged" // upper-case hex, odd length, not hex
	if err := <-log.Append(rc); err != nil {
		t.Fatal(err)
	}
	got, err := store.Receipt(ctx, rc.ID)
	if err != nil || got.Input != rc.Input || got.Output != rc.Output || got.Contract != rc.Contract {
		t.Fatalf("read back %q %q %q, %v; want %q %q %q", got.Input, got.Output, got.Contract, err, rc.Input, rc.Output, rc.Contract)
	}
	if _, err := store.DB.Exec(`UPDATE receipts SET sig = 'not base64!' WHERE id = ?`, rc.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ = store.Receipt(ctx, rc.ID); got.Sig != "not base64!" {
		t.Fatalf("sig %q", got.Sig)
	}
}

// appendAll appends n receipts (realistic from, from+1, …) from n callers at
// once (so the writer signs batches with paths), waits for them and stops the
// writer.
func appendAll(t *testing.T, log *sqlstore.ReceiptLog, from, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := <-log.Append(realistic(from+i, i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	log.Close()
}

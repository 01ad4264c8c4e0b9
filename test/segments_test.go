package test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/s3objects"
)

// Receipts past one database: with --receipt-archive the host seals the chain
// into segments of ROWCALL_RECEIPT_SEGMENT receipts in object storage — a
// directory, or an S3 bucket (a real S3 server on loopback, its credentials
// in the variables ROWCALL_RECEIPT_ARCHIVE_AUTH names) — and prunes sealed
// receipts older than ROWCALL_RECEIPT_RETAIN from the table; confirm, the
// receipt page and export + verify read across segments as one chain; a
// segment altered in storage is refused with an error naming it.
func TestReceiptSegments(t *testing.T) {
	t.Run("dir", func(t *testing.T) {
		dir := t.TempDir()
		testReceiptSegments(t, dir, sqlstore.DirObjects{Dir: dir}, nil)
	})
	t.Run("s3", func(t *testing.T) {
		archive := "s3://rowcall/chain/receipts?endpoint=" + testenv.S3(t, "rowcall").URL + "&region=auto"
		objects, err := s3objects.Open(archive, testenv.S3AccessKeyID, testenv.S3Secret)
		if err != nil {
			t.Fatal(err)
		}
		// serve's --receipt-archive-auth, receipt archive's --archive-auth
		testReceiptSegments(t, archive, objects, []string{"ROWCALL_RECEIPT_ARCHIVE_AUTH=SEG_KEY_ID:SEG_SECRET", "ROWCALL_ARCHIVE_AUTH=SEG_KEY_ID:SEG_SECRET",
			"SEG_KEY_ID=" + testenv.S3AccessKeyID, "SEG_SECRET=" + testenv.S3Secret})
	})
}

// testReceiptSegments runs a host whose --receipt-archive is archive (read
// and written by the test through objects), env added to its environment.
func testReceiptSegments(t *testing.T, archive string, objects sqlstore.ObjectStore, env []string) {
	ctx := context.Background()
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback, append(env, "ROWCALL_RECEIPT_ARCHIVE="+archive, "ROWCALL_RECEIPT_SEGMENT=5",
		"ROWCALL_RECEIPT_RETAIN=0s", "ROWCALL_RECEIPT_SEAL_EVERY=20ms")...)
	ids := segmentCalls(t, h, up)
	// Seq 1..20 are sealed in 4 segments and pruned; 21..23 stay in the table.
	waitSealed(t, h.db(t), 3, 4, "")
	for first := 1; first <= 16; first += 5 {
		key := fmt.Sprintf("receipts/%020d-%020d.jsonl.gz", first, first+4)
		if data, err := objects.Get(ctx, key); err != nil || len(data) == 0 {
			t.Fatalf("segment %s in %s: %d bytes, %v", key, archive, len(data), err)
		}
	}

	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[0], NoAuth: true})
	expect(t, got, 200, map[string]any{"confirmed": true, "verified": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/receipt/" + ids[7] + "?format=json", NoAuth: true}), 200, map[string]any{"confirmed": true})

	dir := t.TempDir()
	keys, chain := filepath.Join(dir, "keys.json"), filepath.Join(dir, "chain.json")
	saveCLI(t, h, keys, "receipt", "keys")
	saveCLI(t, h, chain, "receipt", "export")
	if out, err := verifyCLI(chain, "--keys", keys); err != nil || !strings.Contains(out, "OK: 23 receipts, seq 1 to 23") ||
		!strings.Contains(out, "agrees with the export's own checkpoint") {
		t.Fatalf("the chain across segments: %v\n%s", err, out)
	}

	archiveCLI := func() (string, error) {
		cmd := exec.Command(binary, "receipt", "archive", "--data", h.Data, "--archive", archive, "--keys", keys)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := archiveCLI(); err != nil || !strings.Contains(out, "OK: 23 receipts") {
		t.Fatalf("rowcall receipt archive: %v\n%s", err, out)
	}

	// Alter the second segment (seq 6..10): one receipt's outcome.
	const seg = "receipts/00000000000000000006-00000000000000000010.jsonl.gz"
	data, err := objects.Get(ctx, seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := objects.Put(ctx, seg, alteredSegment(data)); err != nil {
		t.Fatal(err)
	}

	const named = "receipt segment receipts/00000000000000000006-00000000000000000010.jsonl.gz (seq 6 to 10): its sha256 "
	got = h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[7], NoAuth: true})
	if got.Status != 500 || !strings.Contains(string(got.Raw), named) || !strings.Contains(string(got.Raw), "the segment was altered or replaced") {
		t.Fatalf("confirm of a receipt in the altered segment: %d %s", got.Status, got.Raw)
	}
	out, err := exec.Command(binary, "receipt", "export", "--url", h.URL, "--data", h.Data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), named) {
		t.Fatalf("export through the altered segment: %v\n%.600s", err, out)
	}
	if out, err := archiveCLI(); err == nil || !strings.Contains(out, named) {
		t.Fatalf("rowcall receipt archive of the altered segment: %v\n%.600s", err, out)
	}
	// The segments before it still confirm.
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[2], NoAuth: true}), 200, map[string]any{"confirmed": true})

	// A segment missing from the directory (seq 11..15): confirm answers a
	// receipt status naming the segment, the receipt page a 503; neither
	// shows where the archive is on disk.
	if d, ok := objects.(sqlstore.DirObjects); ok {
		const missing = "receipts/00000000000000000011-00000000000000000015.jsonl.gz"
		if err := os.Remove(filepath.Join(d.Dir, filepath.FromSlash(missing))); err != nil {
			t.Fatal(err)
		}
		got := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[12], NoAuth: true})
		expect(t, got, 503, map[string]any{"confirmed": false, "status": "RECEIPT_UNAVAILABLE", "invocation_id": ids[12],
			"reason": "receipt segment " + missing + " (seq 11 to 15): is missing from object storage"})
		page := h.do(t, req{Method: "GET", Path: "/receipt/" + ids[12], NoAuth: true})
		expect(t, page, 503, map[string]any{"error": "receipt_unavailable"})
		for _, r := range []resp{got, page} {
			if strings.Contains(string(r.Raw), d.Dir) || r.JSON["how_to_fix"] == nil {
				t.Fatalf("the answer about a missing segment: %s", r.Raw)
			}
		}
	}
}

// On the worker, in workerd: with an R2 bucket bound as RECEIPTS (the
// commented block of wrangler.toml, uncommented), the request whose receipt
// ends a segment seals it into R2 (as wrangler's own `r2 object get` reads it
// back) and prunes D1; confirm, the receipt page and the export read across
// D1 and R2 as one chain; a segment altered in R2 is refused with an error
// naming it. It logs D1's rows written per receipted call, with and
// without sealing, and the bytes a receipt takes in D1.
func TestReceiptSegmentsWorker(t *testing.T) {
	cfg := prodConfig(t)
	const block = "# [[r2_buckets]]\n# binding = \"RECEIPTS\"\n# bucket_name = \"rowcall-receipts\"\n"
	if !strings.Contains(cfg, block) {
		t.Fatalf("wrangler.toml has no commented RECEIPTS block:\n%s", cfg)
	}
	cfg = strings.Replace(cfg, block, strings.ReplaceAll(block, "# ", ""), 1)
	config := filepath.Join(t.TempDir(), "wrangler.toml")
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tg := startWorkerWith(t, []string{"ROWCALL_RECEIPT_SEGMENT=5", "ROWCALL_RECEIPT_RETAIN=0s"}, []string{config})
	h := tg.host
	r2 := func(op, key, file string) (string, error) {
		cmd := exec.Command(tool(t, "wrangler"), "r2", "object", op, "rowcall-receipts/"+key, "--local", "--persist-to", tg.Persist, "--config", config, "--file", file)
		cmd.Dir, cmd.Env = repoRoot, append(os.Environ(), wranglerEnv...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	ids := segmentCalls(t, h, newUpstream(t, openMeteo))
	// Seq 1..20 are sealed, each segment by the request of its 5th receipt
	// once it has answered, and pruned but for seq 20, the chain's newest when
	// it was sealed (the next seal prunes it); 20..23 stay in D1.
	db := tg.DB(t)
	hot := waitSealed(t, db, 4, 4, tg.Output())
	// What D1 wrote for each call (its meta.rows_written, summed per request
	// in /_worker/stats): once the sealing requests are done.
	var written []int64
	var sealer d1Line // the 10th call's, which sealed seq 6..10
	for deadline := time.Now().Add(30 * time.Second); len(written) < 23; time.Sleep(100 * time.Millisecond) {
		written = written[:0]
		for _, line := range stats(t, h).D1.Recent {
			if line.Request == "POST /api/dispatch" {
				if written = append(written, line.RowsWritten); len(written) == 10 {
					sealer = line
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stats list %d dispatches, want 23", len(written))
		}
	}
	var total, sealed int64
	for i, w := range written {
		total += w
		if (i+1)%5 == 0 {
			sealed += w
		}
	}
	t.Logf("D1 rows written per receipted call: %v; %.1f a call over 23 calls with sealing and pruning; %d on a call that does not seal, %.1f on one that seals 5 and prunes them",
		written, float64(total)/23, written[1], float64(sealed)/4)
	for _, st := range sealer.Each {
		t.Logf("    the sealing call: %4d read %4d written  %.120s", st.RowsRead, st.Written, st.SQL)
	}
	// Bytes in D1: the payload (cells, no page slack) of the receipts table
	// and its indexes per hot receipt, and of receipt_segments per archived one.
	payload := func(table string) (n int64) {
		if err := db.QueryRow(`SELECT COALESCE(SUM(payload), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = ?)`, table).Scan(&n); err != nil {
			t.Fatalf("dbstat: %v", err)
		}
		return n
	}
	t.Logf("D1 bytes: %.0f a receipt in the table (with its indexes), %.0f a receipt archived (its segment's row in receipt_segments)",
		float64(payload("receipts"))/float64(hot), float64(payload("receipt_segments"))/20)
	dir := t.TempDir()
	for first := 1; first <= 16; first += 5 {
		key := fmt.Sprintf("receipts/%020d-%020d.jsonl.gz", first, first+4)
		var want string
		db.QueryRow(`SELECT object_sha256 FROM receipt_segments WHERE object = ?`, key).Scan(&want)
		file := filepath.Join(dir, fmt.Sprint(first))
		if out, err := r2("get", key, file); err != nil {
			t.Fatalf("wrangler r2 object get %s: %v\n%s", key, err, out)
		}
		data, _ := os.ReadFile(file)
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
			t.Fatalf("R2's %s (%d bytes) is not the segment D1 recorded (sha256 %s)", key, len(data), want)
		}
	}
	got := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[0], NoAuth: true})
	expect(t, got, 200, map[string]any{"confirmed": true, "verified": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/receipt/" + ids[7] + "?format=json", NoAuth: true}), 200, map[string]any{"confirmed": true})
	keys, chain := filepath.Join(dir, "keys.json"), filepath.Join(dir, "chain.json")
	cli := func(args ...string) ([]byte, error) {
		cmd := exec.Command(binary, append(args, "--url", h.URL)...)
		cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY="+h.Key)
		return cmd.Output()
	}
	for file, args := range map[string][]string{keys: {"receipt", "keys"}, chain: {"receipt", "export"}} {
		out, err := cli(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		os.WriteFile(file, out, 0o600)
	}
	if out, err := verifyCLI(chain, "--keys", keys); err != nil || !strings.Contains(out, "OK: 23 receipts, seq 1 to 23") {
		t.Fatalf("the chain across D1 and R2: %v\n%s", err, out)
	}

	// Alter the second segment (seq 6..10) in R2: one receipt's outcome.
	const seg = "receipts/00000000000000000006-00000000000000000010.jsonl.gz"
	data, _ := os.ReadFile(filepath.Join(dir, "6"))
	altered := filepath.Join(dir, "altered")
	os.WriteFile(altered, alteredSegment(data), 0o644)
	if out, err := r2("put", seg, altered); err != nil {
		t.Fatalf("wrangler r2 object put: %v\n%s", err, out)
	}
	const named = "receipt segment " + seg + " (seq 6 to 10): its sha256 "
	got = h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[7], NoAuth: true})
	if got.Status != 500 || !strings.Contains(string(got.Raw), named) || !strings.Contains(string(got.Raw), "the segment was altered or replaced") {
		t.Fatalf("confirm of a receipt in the altered segment: %d %s", got.Status, got.Raw)
	}
	if out, err := cli("receipt", "export"); err == nil {
		t.Fatalf("export through the altered segment succeeded:\n%.300s", out)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + ids[2], NoAuth: true}), 200, map[string]any{"confirmed": true})
}

// segmentCalls creates ZZ_TEST_TEMPERATURE against up and makes 23
// receipted calls of it, returning their invocation ids.
func segmentCalls(t *testing.T, h *host, up *upstream) []string {
	t.Helper()
	createRow(t, h, temperatureRow(up.URL))
	var ids []string
	for range 23 {
		ids = append(ids, proof(t, dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "1|2"))["invocation_id"].(string))
	}
	return ids
}

// waitSealed waits until db holds hot receipts and segments sealed ones, and
// returns hot; output is the host's, for the failure.
func waitSealed(t *testing.T, db *sql.DB, hot, segments int, output string) int {
	t.Helper()
	var n, s int
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		db.QueryRow(`SELECT COUNT(*) FROM receipts`).Scan(&n)
		db.QueryRow(`SELECT COUNT(*) FROM receipt_segments`).Scan(&s)
		if n == hot && s == segments {
			return hot
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table holds %d receipts and %d segments are sealed, want %d and %d\n%s", n, s, hot, segments, output)
		}
	}
}

// alteredSegment is segment data with one receipt's outcome changed.
func alteredSegment(data []byte) []byte {
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	text, _ := io.ReadAll(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Replace(text, []byte(`"outcome":"ok"`), []byte(`"outcome":"ERR:http:500"`), 1))
	zw.Close()
	return buf.Bytes()
}

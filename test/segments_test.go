package test

import (
	"bytes"
	"compress/gzip"
	"context"
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
	createRow(t, h, temperatureRow(up.URL))
	var ids []string
	for range 23 {
		ids = append(ids, proof(t, dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "1|2"))["invocation_id"].(string))
	}
	// Seq 1..20 are sealed in 4 segments and pruned; 21..23 stay in the table.
	db := h.db(t)
	var hot, segments int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		db.QueryRow(`SELECT COUNT(*) FROM receipts`).Scan(&hot)
		db.QueryRow(`SELECT COUNT(*) FROM receipt_segments`).Scan(&segments)
		if hot == 3 && segments == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table holds %d receipts and %d segments are sealed, want 3 and 4", hot, segments)
		}
	}
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
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	text, _ := io.ReadAll(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Replace(text, []byte(`"outcome":"ok"`), []byte(`"outcome":"ERR:http:500"`), 1))
	zw.Close()
	if err := objects.Put(ctx, seg, buf.Bytes()); err != nil {
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
}

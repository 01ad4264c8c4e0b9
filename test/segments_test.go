package test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Receipts past one database: with --receipt-archive the host seals the chain
// into segments of ROWCALL_RECEIPT_SEGMENT receipts in a directory and prunes
// sealed receipts older than ROWCALL_RECEIPT_RETAIN from the table; confirm,
// the receipt page and export + verify read across segments as one chain; a
// segment altered on disk is refused with an error naming it.
func TestReceiptSegments(t *testing.T) {
	up := newUpstream(t, openMeteo)
	archive := t.TempDir()
	h := startHost(t, allowLoopback, "ROWCALL_RECEIPT_ARCHIVE="+archive, "ROWCALL_RECEIPT_SEGMENT=5",
		"ROWCALL_RECEIPT_RETAIN=0s", "ROWCALL_RECEIPT_SEAL_EVERY=20ms")
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
	files, _ := filepath.Glob(filepath.Join(archive, "receipts", "*.jsonl.gz"))
	if len(files) != 4 {
		t.Fatalf("segment files: %v", files)
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
		out, err := exec.Command(binary, "receipt", "archive", "--data", h.Data, "--archive", archive, "--keys", keys).CombinedOutput()
		return string(out), err
	}
	if out, err := archiveCLI(); err != nil || !strings.Contains(out, "OK: 23 receipts") {
		t.Fatalf("rowcall receipt archive: %v\n%s", err, out)
	}

	// Alter the second segment (seq 6..10): one receipt's outcome.
	seg := filepath.Join(archive, "receipts", "00000000000000000006-00000000000000000010.jsonl.gz")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	text, _ := io.ReadAll(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Replace(text, []byte(`"outcome":"ok"`), []byte(`"outcome":"ERR:http:500"`), 1))
	zw.Close()
	os.WriteFile(seg, buf.Bytes(), 0o644)

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

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/sqlstore"
)

// The worker's segment settings: defaults as the host's flags, and a value
// it cannot use named with what to set.
func TestArchiveSettings(t *testing.T) {
	if size, retain, err := archiveSettings("", ""); err != nil || size != sqlstore.DefaultSegmentSize || retain != 720*time.Hour {
		t.Fatalf("defaults: %d %v %v", size, retain, err)
	}
	if size, retain, err := archiveSettings("5", "0s"); err != nil || size != 5 || retain != 0 {
		t.Fatalf("5, 0s: %d %v %v", size, retain, err)
	}
	for _, c := range [][3]string{{"0", "", "ROWCALL_RECEIPT_SEGMENT \"0\""}, {"ten", "", "ROWCALL_RECEIPT_SEGMENT"}, {"", "-1h", "ROWCALL_RECEIPT_RETAIN \"-1h\""}, {"", "30d", "ROWCALL_RECEIPT_RETAIN"}} {
		if _, _, err := archiveSettings(c[0], c[1]); err == nil || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("archiveSettings(%q, %q): %v, want %s", c[0], c[1], err, c[2])
		}
	}
}

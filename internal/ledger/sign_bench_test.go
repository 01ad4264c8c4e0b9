package ledger

import (
	"testing"

	"github.com/rowcall/rowcall"
)

// BenchmarkSignChain signs one group commit of 32 receipts (a group's size
// under load): their hashes, the Merkle tree, one signature and each
// receipt's path. ns/op and allocs/op are per group.
//
//	go test ./internal/ledger -run xxx -bench SignChain -benchmem
func BenchmarkSignChain(b *testing.B) {
	s, _ := NewSigner(make([]byte, 32))
	rs := make([]*rowcall.Receipt, 32)
	for i := range rs {
		rs[i] = &rowcall.Receipt{ID: "inv_mio1x2y3abcdefgh", Trace: "t_mio1x2y3abcdef", Key: "ECHO", Type: rowcall.TypeFn, Runner: "fn",
			StartedAt: "2026-12-01T15:00:00.000Z", OK: true, Material: true, Outcome: "ok", Input: rowcall.Fingerprint([]byte("hello")),
			Output: rowcall.Fingerprint([]byte("hello")), Contract: rowcall.Fingerprint([]byte("contract"))}
	}
	for b.Loop() {
		s.SignChain(rs, 41, rowcall.Fingerprint([]byte("prev")))
	}
}

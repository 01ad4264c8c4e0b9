package ledger

import (
	"fmt"

	"github.com/rowcall/rowcall"
)

// Chain verifies a chain one receipt at a time, holding only the receipt
// before: Keys.Verify over a slice, and `rowcall receipt verify` over an
// export of any length in bounded memory. Feed receipts in seq order to Add;
// the first error names the first bad link. Heads records the sha256 of the
// receipts at the seqs asked for (Watch), for checkpoints to Match at the end.
type Chain struct {
	keys        Keys
	prev        rowcall.Receipt
	n           int64
	first, last int64
	watch       map[int64]*rowcall.Receipt // nil until added
}

// NewChain starts a streaming verification with keys.
func (k Keys) NewChain() *Chain { return &Chain{keys: k, watch: map[int64]*rowcall.Receipt{}} }

// Watch asks Add to remember the hash of the receipt at seq.
func (c *Chain) Watch(seq int64) {
	if _, ok := c.watch[seq]; !ok {
		c.watch[seq] = nil
	}
}

// Add checks r (its hash, its signature) and its link to the receipt before.
func (c *Chain) Add(r *rowcall.Receipt) error {
	if err := c.keys.Check(r); err != nil {
		return err
	}
	if c.n == 0 {
		if r.Seq == 1 && r.Prev != "" {
			return fmt.Errorf("receipt seq 1 (%s): the first receipt must have no prev_sha256", r.ID)
		}
		c.first = r.Seq
	} else {
		prev := &c.prev
		if r.Seq != prev.Seq+1 {
			return fmt.Errorf("receipt seq %d (%s): the chain jumps from seq %d to %d — %d receipt(s) missing after %s",
				r.Seq, r.ID, prev.Seq, r.Seq, r.Seq-prev.Seq-1, prev.ID)
		}
		if r.Prev != prev.SHA256 {
			return fmt.Errorf("receipt seq %d (%s): prev_sha256 %s does not match seq %d's sha256 %s — a receipt was replaced",
				r.Seq, r.ID, short(r.Prev), prev.Seq, short(prev.SHA256))
		}
	}
	if _, ok := c.watch[r.Seq]; ok {
		c.watch[r.Seq] = &rowcall.Receipt{ID: r.ID, Seq: r.Seq, SHA256: r.SHA256}
	}
	c.prev = rowcall.Receipt{ID: r.ID, Seq: r.Seq, SHA256: r.SHA256}
	c.n++
	c.last = r.Seq
	return nil
}

// Count is how many receipts were added; First and Last their seq range.
func (c *Chain) Count() int64 { return c.n }
func (c *Chain) First() int64 { return c.first }
func (c *Chain) Last() int64  { return c.last }

// Match checks the chain added so far against cp, as Checkpoint.Match does
// for a slice (cp.Size must have been watched before its receipt was added).
func (c *Chain) Match(cp Checkpoint) error {
	// The chain's ends and the watched receipt are all Checkpoint.Match reads.
	var ends []rowcall.Receipt
	if c.n > 0 {
		ends = append(ends, rowcall.Receipt{Seq: c.first})
		if r := c.watch[cp.Size]; r != nil {
			ends = append(ends, *r)
		}
		ends = append(ends, rowcall.Receipt{Seq: c.last})
		if r := c.watch[cp.Size]; r != nil && r.Seq == c.first {
			ends = ends[1:] // the watched one is the first: keep its hash
		}
	}
	return cp.Match(ends)
}

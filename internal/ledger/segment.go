package ledger

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Root is the Merkle root (hex) over receipt hashes (hex sha256, in seq
// order), in the same tree shape a batch's signature covers: what a sealed
// segment of the chain records, so a segment read back from object storage
// can be checked against the database's record of it.
func Root(hashes []string) string {
	if len(hashes) == 0 {
		return hex.EncodeToString(emptyRoot[:])
	}
	level := make([][]byte, len(hashes))
	for i, h := range hashes {
		level[i] = leaf(h)
	}
	for len(level) > 1 {
		level = parents(level)
	}
	return hex.EncodeToString(level[0])
}

// Segment names a sealed run of the chain: receipts First..Last, the Merkle
// Root over their hashes, and the SHA-256 of the object that holds them.
type Segment struct {
	First, Last int64
	Root        string // hex
	Object      string // hex SHA-256 of the stored bytes
}

// segmentTag starts a sealed segment's checkpoint extension line:
// "rowcall-segment FIRST LAST ROOT OBJECT_SHA256".
const segmentTag = "rowcall-segment"

// SignSegment signs the checkpoint of a sealed segment: the chain's head at
// its last receipt (c, as SignCheckpoint signs it) with one extension line
// naming the segment, so the signature covers its range, root and object hash.
func (s *Signer) SignSegment(c Checkpoint, seg Segment) ([]byte, error) {
	if c.Size != seg.Last {
		return nil, fmt.Errorf("ledger: a segment ending at seq %d has a checkpoint at seq %d", seg.Last, c.Size)
	}
	return s.signCheckpoint(c, seg.Line())
}

// Line is the segment as its checkpoint's extension line.
func (seg Segment) Line() string {
	return fmt.Sprintf("%s %d %d %s %s", segmentTag, seg.First, seg.Last, seg.Root, seg.Object)
}

// OpenSegment reads a segment's signed checkpoint (SignSegment's), checking
// that one of k signed it.
func (k Keys) OpenSegment(signed []byte) (Checkpoint, Segment, error) {
	c, extra, err := k.openCheckpoint(signed)
	if err != nil {
		return c, Segment{}, err
	}
	for _, l := range extra {
		f := strings.Fields(l)
		if len(f) != 5 || f[0] != segmentTag {
			continue
		}
		first, err1 := strconv.ParseInt(f[1], 10, 64)
		last, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || first < 1 || last < first || last != c.Size {
			return c, Segment{}, fmt.Errorf("the checkpoint's segment line %q does not name seq FIRST..%d", l, c.Size)
		}
		return c, Segment{First: first, Last: last, Root: f[3], Object: f[4]}, nil
	}
	return c, Segment{}, fmt.Errorf("the checkpoint names no segment")
}

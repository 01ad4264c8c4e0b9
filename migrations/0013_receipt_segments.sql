-- Sealed segments of the receipt chain: runs of receipts (first_seq..last_seq)
-- written to object storage as one object each (gzip JSON lines), so the
-- receipts table keeps only the hot window the operator retains. Each row is
-- the database's record of one segment: where it is, the SHA-256 of its bytes
-- (checked on every read), the Merkle root over its receipts' sha256 (as
-- package ledger builds batch trees), the signed checkpoint at its last
-- receipt (naming the segment in an extension line), and a Bloom filter of its
-- invocation ids so ?confirm= finds an archived receipt without an index that
-- grows with every receipt.
CREATE TABLE receipt_segments (
  first_seq     INTEGER PRIMARY KEY,
  last_seq      INTEGER NOT NULL UNIQUE,
  object        TEXT NOT NULL,
  object_sha256 TEXT NOT NULL,
  bytes         INTEGER NOT NULL,
  root          TEXT NOT NULL,
  head          TEXT NOT NULL,
  checkpoint    TEXT NOT NULL,
  ids           BLOB NOT NULL,
  sealed_at     TEXT NOT NULL
);

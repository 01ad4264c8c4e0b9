-- Receipts are signed in groups: one Ed25519 signature over the Merkle root of
-- every receipt the writer stores at once. Each receipt keeps the same sig and
-- its place in the group (JSON: {"index","size","path"}), enough to verify it
-- alone (see package ledger). Receipts written before this have no batch: their
-- signature covers their canonical form.
ALTER TABLE receipts ADD COLUMN batch TEXT;

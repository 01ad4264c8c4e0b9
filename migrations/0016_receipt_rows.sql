-- Smaller receipt rows. Measured in dbstat and in D1's
-- rows_written (docs/benchmarks.md, "Receipts"):
-- - seq is the table's rowid (INTEGER PRIMARY KEY): the chain is read in seq
--   order straight from the table, and the receipts_seq index, one more entry
--   written per receipt on D1, is gone. A receipt from before the chain
--   (0006) has no seq; it keeps its place as -rowid, below every chained seq.
-- - receipts_token_started holds only receipts a capability token made (what
--   budgets sum, Store.Spent): an owner's call writes no entry to it.
-- - The hashes, the signature and the batch are stored as bytes by rowcall from
--   now on (sqlstore/receiptcols.go): a SHA-256 in 32 bytes, not 64 hex
--   characters. Rows copied here keep their text; rowcall reads both forms.
CREATE TABLE receipts_0016 (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  trace           TEXT NOT NULL,
  parent          TEXT,
  actor           TEXT NOT NULL,
  key             TEXT NOT NULL,
  type            TEXT NOT NULL,
  runner          TEXT NOT NULL,
  started_at      TEXT NOT NULL,
  duration_ms     REAL NOT NULL,
  ok              INTEGER NOT NULL,
  material        INTEGER NOT NULL,
  shape           INTEGER NOT NULL DEFAULT 0,
  cost_usd        REAL NOT NULL DEFAULT 0,
  upstream_status INTEGER,
  outcome         TEXT NOT NULL,
  input_sha256    BLOB NOT NULL,
  output_sha256   BLOB NOT NULL,
  contract_sha256 BLOB NOT NULL,
  prev_sha256     BLOB,
  sha256          BLOB,
  sig             BLOB,
  key_id          TEXT,
  token_id        TEXT,
  batch           BLOB
);
INSERT INTO receipts_0016 (seq, id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape,
  cost_usd, upstream_status, outcome, input_sha256, output_sha256, contract_sha256, prev_sha256, sha256, sig, key_id,
  token_id, batch)
SELECT COALESCE(seq, -rowid), id, trace, parent, actor, key, type, runner, started_at, duration_ms, ok, material, shape,
  cost_usd, upstream_status, outcome, input_sha256, output_sha256, contract_sha256, prev_sha256, sha256, sig, key_id,
  token_id, batch
FROM receipts;
DROP TABLE receipts;
ALTER TABLE receipts_0016 RENAME TO receipts;
CREATE INDEX receipts_trace ON receipts (trace);
CREATE INDEX receipts_token_started ON receipts (token_id, started_at) WHERE token_id IS NOT NULL;

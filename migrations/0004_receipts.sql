-- Receipts: one per invocation, written by the dispatcher. They hold SHA-256
-- fingerprints of input, output and the row's callable contract, never values,
-- and outlive the row they describe (no foreign key to directory).
CREATE TABLE receipts (
  id              TEXT PRIMARY KEY,
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
  input_sha256    TEXT NOT NULL,
  output_sha256   TEXT NOT NULL,
  contract_sha256 TEXT NOT NULL
);
CREATE INDEX receipts_trace ON receipts (trace);
CREATE INDEX receipts_key ON receipts (key, started_at);

-- The circuit breaker: consecutive 401/403 answers per row. Kept in the
-- database so it survives restarts and is shared by every host.
CREATE TABLE breakers (
  key        TEXT PRIMARY KEY,
  failures   INTEGER NOT NULL,
  opened_at  TEXT,
  updated_at TEXT NOT NULL
);

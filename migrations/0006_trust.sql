-- Capability tokens: the secret is stored only as its SHA-256.
CREATE TABLE tokens (
  id               TEXT PRIMARY KEY,
  secret_sha256    TEXT NOT NULL UNIQUE,
  name             TEXT,
  scope_keys       TEXT NOT NULL DEFAULT '[]',
  scope_categories TEXT NOT NULL DEFAULT '[]',
  audience         TEXT NOT NULL,
  risk_ceiling     TEXT NOT NULL CHECK (risk_ceiling IN ('low','high')),
  pins             TEXT,
  fixed_body       TEXT,
  max_payload      INTEGER,
  expires_at       TEXT,
  created_at       TEXT NOT NULL,
  revoked_at       TEXT
);

-- Signed, chained receipts: seq orders the chain, prev_sha256 is the previous
-- receipt's sha256, sha256 is the hash of this receipt's canonical JSON, and sig
-- is the host's Ed25519 signature of it. A deleted or edited receipt breaks the
-- chain. The unique seq makes two writers race on the database, not silently fork.
ALTER TABLE receipts ADD COLUMN seq INTEGER;
ALTER TABLE receipts ADD COLUMN prev_sha256 TEXT;
ALTER TABLE receipts ADD COLUMN sha256 TEXT;
ALTER TABLE receipts ADD COLUMN sig TEXT;
ALTER TABLE receipts ADD COLUMN key_id TEXT;
ALTER TABLE receipts ADD COLUMN token_id TEXT;
CREATE UNIQUE INDEX receipts_seq ON receipts (seq);

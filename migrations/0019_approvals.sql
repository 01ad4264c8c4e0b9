-- Approvals (docs/tokens.md, "Approvals"; docs/RATIONALE.md, "Why is an
-- approval a row column and a table of its own"). A row with approval = 1
-- runs only once a person approved the exact call; a token minted with
-- approval 'sensitive' or 'all' needs the same for what it calls, and one
-- minted with approve = 1 may approve the calls of rows in its scope.
ALTER TABLE directory ADD COLUMN approval INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN approval TEXT;
ALTER TABLE tokens ADD COLUMN approve INTEGER NOT NULL DEFAULT 0;

-- A receipt of a call that ran on an approval names it and who approved.
ALTER TABLE receipts ADD COLUMN approval TEXT;
ALTER TABLE receipts ADD COLUMN approver TEXT;

-- One approval per call that waited: bound to the row's contract, the
-- SHA-256 of the call's arguments and the calling credential (a token's id,
-- or 'owner'); status moves pending → approved|denied|expired, approved →
-- used|expired, each by one conditional UPDATE, so two hosts cannot both
-- use or decide it.
CREATE TABLE approvals (
  id              TEXT PRIMARY KEY,
  key             TEXT NOT NULL,
  contract_sha256 TEXT NOT NULL,
  input_sha256    TEXT NOT NULL,
  caller          TEXT NOT NULL,
  actor           TEXT NOT NULL,
  why             TEXT NOT NULL,
  shape           TEXT,
  status          TEXT NOT NULL CHECK (status IN ('pending','approved','denied','expired','used')),
  created_at      TEXT NOT NULL,
  expires_at      TEXT NOT NULL,
  decided_at      TEXT,
  decided_by      TEXT,
  reason          TEXT,
  used_by         TEXT
);
CREATE INDEX approvals_open ON approvals (status, expires_at);

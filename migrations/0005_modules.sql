-- fn modules (beyond the seed): the WebAssembly modules that fn rows name in
-- target. One row per module name; the bytes live in a blob store addressed by
-- digest (module_blobs below on SQLite and D1, a directory or R2 elsewhere).
-- Written by package modules with single statements only (D1 has no interactive
-- transactions): version is bumped on every change of digest, and PutIf compares it.
CREATE TABLE IF NOT EXISTS modules (
  name       TEXT PRIMARY KEY,               -- modules.NameRule: lowercase, e.g. now, last_reply_of
  digest     TEXT NOT NULL CHECK (length(digest) = 64), -- SHA-256 of the bytes, lowercase hex
  size       INTEGER NOT NULL CHECK (size > 0),
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- The blob store's garbage collection asks "is this digest still used?".
CREATE INDEX IF NOT EXISTS modules_digest ON modules (digest);

-- Module bytes for the SQL blob store, content-addressed. D1 caps a value at
-- 2,000,000 bytes, so the bytes are cut into chunks of at most 1,000,000; every
-- chunk row repeats the chunk count and total size so a reader can tell a
-- complete blob from a partly written one.
CREATE TABLE IF NOT EXISTS module_blobs (
  digest TEXT NOT NULL,
  chunk  INTEGER NOT NULL,   -- 0-based position
  chunks INTEGER NOT NULL,   -- how many chunks the blob has
  size   INTEGER NOT NULL,   -- the blob's total size in bytes
  data   BLOB NOT NULL,
  PRIMARY KEY (digest, chunk)
);

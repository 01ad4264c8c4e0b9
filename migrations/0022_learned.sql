-- Phrases ask learned for a row (docs/finding.md#learning-from-use): a question a
-- teaching credential asked before it called the row (source 'use'), one a model
-- wrote for it (source 'model'), or one the owner wrote (source 'owner'). scope is
-- the asker's token scope (learn.ScopeID; '*' the whole directory): a phrase
-- ranks the row only for asks under the same scope. vector is the phrase's
-- embedding by model, as the vectors table keeps a row's (NULL until embedded).
-- approved phrases are the owner's: never aged out nor pushed out by the cap.
-- Phrases are not part of a row, its version or its contract.
CREATE TABLE learned (
  id         TEXT PRIMARY KEY,   -- lrn_…
  key        TEXT NOT NULL,
  scope      TEXT NOT NULL,
  phrase     TEXT NOT NULL,
  source     TEXT NOT NULL CHECK (source IN ('use','model','owner')),
  approved   INTEGER NOT NULL DEFAULT 0,
  actor      TEXT NOT NULL,      -- who taught it: owner:…, token:tok_…, model:KEY
  receipt    TEXT,               -- the call that taught it (inv_…)
  uses       INTEGER NOT NULL DEFAULT 1,
  model      TEXT,
  vector     BLOB,
  created_at TEXT NOT NULL,
  used_at    TEXT NOT NULL,      -- the last time it was taught again: the age the TTL counts from
  updated_at TEXT NOT NULL,
  UNIQUE (scope, key, phrase)
);
CREATE INDEX learned_key ON learned (key, scope);

-- A deleted row's phrases go with it.
CREATE TRIGGER directory_delete_learned AFTER DELETE ON directory
BEGIN DELETE FROM learned WHERE key = OLD.key; END;

-- A token minted with teach = 1 teaches ask: its questions followed by a
-- successful call of one of the matches become that row's learned phrases.
ALTER TABLE tokens ADD COLUMN teach INTEGER NOT NULL DEFAULT 0;

-- The directory: one row per capability. The seventeen columns and the CHECK
-- constraint are the seed's production table, in its order; version is ours
-- (optimistic concurrency: every write bumps it, If-Match compares it).
CREATE TABLE directory (
  key        TEXT PRIMARY KEY,
  type       TEXT NOT NULL CHECK (type IN ('fn','http','agent','flow')),
  target     TEXT,
  auth       TEXT,
  content    TEXT,
  updated_at TEXT NOT NULL,
  category TEXT, allowed_categories TEXT, seq INTEGER, enabled INTEGER DEFAULT 1,
  planner_visible INTEGER DEFAULT 1, planner_rank INTEGER DEFAULT 100,
  input_schema TEXT, examples TEXT, sensitive INTEGER DEFAULT 0, runner TEXT,
  includes TEXT,
  version INTEGER NOT NULL DEFAULT 1
);

-- Listing filters by type and category; the canonical order is (seq, key).
CREATE INDEX directory_type ON directory (type, key);
CREATE INDEX directory_category ON directory (category, key);
CREATE INDEX directory_order ON directory (seq, key);

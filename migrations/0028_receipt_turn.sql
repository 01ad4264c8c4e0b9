-- The receipt chain's turn (docs/RATIONALE.md, "How does a writer that keeps
-- losing the chain's end still store its receipts?"). A writer of the chain
-- (a host, a worker isolate) that has lost the chain's end to another writer
-- takes the turn by inserting this table's one row; while the row is there,
-- every other writer's receipt INSERT stores nothing (`AND NOT EXISTS (SELECT
-- 1 FROM receipt_turn)`), so the holder's next INSERT links to an end no one
-- else can move. The holder deletes the row once its callers are answered; a
-- row whose holder stopped moving the end is deleted by the writers waiting
-- on it. Empty but for those moments (the look costs a receipt INSERT one row
-- read on D1: docs/d1.md).
CREATE TABLE receipt_turn (
  one    INTEGER PRIMARY KEY CHECK (one = 1),
  holder TEXT NOT NULL
);

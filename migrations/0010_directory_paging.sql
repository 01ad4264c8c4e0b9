-- A list page reads the rows it returns, not the table (docs/d1.md: D1 bills
-- rows read). The canonical order (seq IS NULL, seq, key) gets an index of its
-- own, so ORDER BY … LIMIT walks it instead of sorting every row, and a row's
-- row_num on an unfiltered page is its offset; the row count a page reports
-- is kept in directory_count by the triggers below instead of counted.
CREATE INDEX directory_canonical ON directory (seq IS NULL, seq, key);

CREATE TABLE directory_count (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  rows INTEGER NOT NULL
);
INSERT INTO directory_count (id, rows) SELECT 1, COUNT(*) FROM directory;

CREATE TRIGGER directory_count_insert AFTER INSERT ON directory
BEGIN UPDATE directory_count SET rows = rows + 1 WHERE id = 1; END;
CREATE TRIGGER directory_count_delete AFTER DELETE ON directory
BEGIN UPDATE directory_count SET rows = rows - 1 WHERE id = 1; END;

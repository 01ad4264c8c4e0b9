-- The ask index: SQLite FTS5 with the porter stemmer over each row's key,
-- category, '# WHAT:', '# WHEN_TO_USE:' and '# ARGS:' lines, input_schema
-- descriptions and, with the least weight, the whole content. Triggers keep it
-- in step with directory in the same statement as the write (SQLite, libSQL and
-- D1 all have FTS5). search_keys gives each key a stable integer id for the FTS
-- rowid (a directory rowid may change on VACUUM).
CREATE TABLE search_keys (
  id  INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE directory_fts USING fts5(
  key, category, what, when_to_use, args, schema_text, doc,
  tokenize = 'porter unicode61'
);

CREATE TRIGGER directory_insert_search AFTER INSERT ON directory
BEGIN
  INSERT INTO search_keys (key) VALUES (NEW.key) ON CONFLICT (key) DO NOTHING;
  INSERT INTO directory_fts (rowid, key, category, what, when_to_use, args, schema_text, doc)
  VALUES ((SELECT id FROM search_keys WHERE key = NEW.key), NEW.key, COALESCE(NEW.category, ''),
    CASE WHEN instr(NEW.content, '# WHAT:') > 0 THEN substr(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7), 1, CASE WHEN instr(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7), char(10)) > 0 THEN instr(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7), char(10)) - 1 ELSE length(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7)) END) ELSE '' END,
    CASE WHEN instr(NEW.content, '# WHEN_TO_USE:') > 0 THEN substr(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14), 1, CASE WHEN instr(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14), char(10)) > 0 THEN instr(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14), char(10)) - 1 ELSE length(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14)) END) ELSE '' END,
    CASE WHEN instr(NEW.content, '# ARGS:') > 0 THEN substr(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7), 1, CASE WHEN instr(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7), char(10)) > 0 THEN instr(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7), char(10)) - 1 ELSE length(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7)) END) ELSE '' END,
    CASE WHEN json_valid(NEW.input_schema) THEN (SELECT COALESCE(group_concat(value, ' '), '') FROM json_tree(NEW.input_schema) WHERE key IN ('description', 'title')) ELSE '' END,
    COALESCE(NEW.content, ''));
END;

CREATE TRIGGER directory_update_search AFTER UPDATE ON directory
BEGIN
  DELETE FROM directory_fts WHERE rowid = (SELECT id FROM search_keys WHERE key = OLD.key);
  INSERT INTO directory_fts (rowid, key, category, what, when_to_use, args, schema_text, doc)
  VALUES ((SELECT id FROM search_keys WHERE key = NEW.key), NEW.key, COALESCE(NEW.category, ''),
    CASE WHEN instr(NEW.content, '# WHAT:') > 0 THEN substr(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7), 1, CASE WHEN instr(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7), char(10)) > 0 THEN instr(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7), char(10)) - 1 ELSE length(substr(NEW.content, instr(NEW.content, '# WHAT:') + 7)) END) ELSE '' END,
    CASE WHEN instr(NEW.content, '# WHEN_TO_USE:') > 0 THEN substr(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14), 1, CASE WHEN instr(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14), char(10)) > 0 THEN instr(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14), char(10)) - 1 ELSE length(substr(NEW.content, instr(NEW.content, '# WHEN_TO_USE:') + 14)) END) ELSE '' END,
    CASE WHEN instr(NEW.content, '# ARGS:') > 0 THEN substr(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7), 1, CASE WHEN instr(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7), char(10)) > 0 THEN instr(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7), char(10)) - 1 ELSE length(substr(NEW.content, instr(NEW.content, '# ARGS:') + 7)) END) ELSE '' END,
    CASE WHEN json_valid(NEW.input_schema) THEN (SELECT COALESCE(group_concat(value, ' '), '') FROM json_tree(NEW.input_schema) WHERE key IN ('description', 'title')) ELSE '' END,
    COALESCE(NEW.content, ''));
END;

CREATE TRIGGER directory_delete_search AFTER DELETE ON directory
BEGIN
  DELETE FROM directory_fts WHERE rowid = (SELECT id FROM search_keys WHERE key = OLD.key);
  DELETE FROM search_keys WHERE key = OLD.key;
END;

-- Index the rows that existed before this migration.
INSERT INTO search_keys (key) SELECT key FROM directory ORDER BY key;
INSERT INTO directory_fts (rowid, key, category, what, when_to_use, args, schema_text, doc)
SELECT s.id, d.key, COALESCE(d.category, ''),
  CASE WHEN instr(d.content, '# WHAT:') > 0 THEN substr(substr(d.content, instr(d.content, '# WHAT:') + 7), 1, CASE WHEN instr(substr(d.content, instr(d.content, '# WHAT:') + 7), char(10)) > 0 THEN instr(substr(d.content, instr(d.content, '# WHAT:') + 7), char(10)) - 1 ELSE length(substr(d.content, instr(d.content, '# WHAT:') + 7)) END) ELSE '' END,
  CASE WHEN instr(d.content, '# WHEN_TO_USE:') > 0 THEN substr(substr(d.content, instr(d.content, '# WHEN_TO_USE:') + 14), 1, CASE WHEN instr(substr(d.content, instr(d.content, '# WHEN_TO_USE:') + 14), char(10)) > 0 THEN instr(substr(d.content, instr(d.content, '# WHEN_TO_USE:') + 14), char(10)) - 1 ELSE length(substr(d.content, instr(d.content, '# WHEN_TO_USE:') + 14)) END) ELSE '' END,
  CASE WHEN instr(d.content, '# ARGS:') > 0 THEN substr(substr(d.content, instr(d.content, '# ARGS:') + 7), 1, CASE WHEN instr(substr(d.content, instr(d.content, '# ARGS:') + 7), char(10)) > 0 THEN instr(substr(d.content, instr(d.content, '# ARGS:') + 7), char(10)) - 1 ELSE length(substr(d.content, instr(d.content, '# ARGS:') + 7)) END) ELSE '' END,
  CASE WHEN json_valid(d.input_schema) THEN (SELECT COALESCE(group_concat(value, ' '), '') FROM json_tree(d.input_schema) WHERE key IN ('description', 'title')) ELSE '' END,
  COALESCE(d.content, '')
FROM directory d JOIN search_keys s ON s.key = d.key;

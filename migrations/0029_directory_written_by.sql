-- Each version of a row names who wrote it: written_by is the writer's actor
-- as the host resolved it (owner:terminal-key, owner:bearer, person:per_… —
-- the person's id, which GET /api/people resolves and which never changes —
-- or rowcall:… for the host's own writes), set by the host on every write
-- and never by a row's body. NULL (read as "") for rows written before this
-- migration. It is not part of the callable contract. The directory's event
-- triggers are made again with it in each snapshot.
--
-- A deletion names its deleter too, in the written_by of its event's
-- snapshot (the row as the deletion left it), so every event's snapshot — the
-- after of an insert or update, the before of a delete — names who made it.
-- A trigger cannot see who ran a DELETE, and the deletion must stay one
-- statement: D1 runs no interactive transaction, and an UPDATE … SET
-- written_by before the DELETE as a second statement could land alone,
-- leaving the row attributed to someone who never wrote it (and would be an
-- update of its own, moving the word index and the event log). So the host
-- deletes a row by inserting into directory_deletions (the key and who
-- deletes it, selected from the row only when it is at the version the
-- caller expects: INSERT … SELECT … RETURNING is the one statement, and
-- answers whether it matched); the trigger below deletes the row, whose
-- delete event reads the deleter from that table, then empties it. The table
-- never keeps a row between statements; a DELETE made outside the host (by
-- hand, in SQL) finds no deleter there and records written_by NULL.
ALTER TABLE directory ADD COLUMN written_by TEXT;

CREATE TABLE directory_deletions (
  key        TEXT NOT NULL,
  written_by TEXT
);

CREATE TRIGGER directory_deletion AFTER INSERT ON directory_deletions
BEGIN
  DELETE FROM directory WHERE key = NEW.key;
  DELETE FROM directory_deletions WHERE key = NEW.key;
END;

DROP TRIGGER directory_insert_event;
DROP TRIGGER directory_update_event;
DROP TRIGGER directory_delete_event;

CREATE TRIGGER directory_insert_event AFTER INSERT ON directory
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('DIRECTORY_MUTATE', 'insert', NEW.key, NEW.version, NULL,
    json_object('key', NEW.key, 'type', NEW.type, 'target', NEW.target, 'auth', NEW.auth,
      'content', NEW.content, 'updated_at', NEW.updated_at, 'category', NEW.category,
      'allowed_categories', NEW.allowed_categories, 'seq', NEW.seq, 'enabled', NEW.enabled,
      'planner_visible', NEW.planner_visible, 'planner_rank', NEW.planner_rank,
      'input_schema', NEW.input_schema, 'examples', NEW.examples, 'sensitive', NEW.sensitive,
      'output_schema', NEW.output_schema, 'written_by', NEW.written_by, 'approval', NEW.approval, 'runner', NEW.runner, 'includes', NEW.includes, 'created_at', NEW.created_at,
      'version', NEW.version),
    NEW.updated_at);
END;

CREATE TRIGGER directory_update_event AFTER UPDATE ON directory
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('DIRECTORY_MUTATE', 'update', NEW.key, NEW.version,
    json_object('key', OLD.key, 'type', OLD.type, 'target', OLD.target, 'auth', OLD.auth,
      'content', OLD.content, 'updated_at', OLD.updated_at, 'category', OLD.category,
      'allowed_categories', OLD.allowed_categories, 'seq', OLD.seq, 'enabled', OLD.enabled,
      'planner_visible', OLD.planner_visible, 'planner_rank', OLD.planner_rank,
      'input_schema', OLD.input_schema, 'examples', OLD.examples, 'sensitive', OLD.sensitive,
      'output_schema', OLD.output_schema, 'written_by', OLD.written_by, 'approval', OLD.approval, 'runner', OLD.runner, 'includes', OLD.includes, 'created_at', OLD.created_at,
      'version', OLD.version),
    json_object('key', NEW.key, 'type', NEW.type, 'target', NEW.target, 'auth', NEW.auth,
      'content', NEW.content, 'updated_at', NEW.updated_at, 'category', NEW.category,
      'allowed_categories', NEW.allowed_categories, 'seq', NEW.seq, 'enabled', NEW.enabled,
      'planner_visible', NEW.planner_visible, 'planner_rank', NEW.planner_rank,
      'input_schema', NEW.input_schema, 'examples', NEW.examples, 'sensitive', NEW.sensitive,
      'output_schema', NEW.output_schema, 'written_by', NEW.written_by, 'approval', NEW.approval, 'runner', NEW.runner, 'includes', NEW.includes, 'created_at', NEW.created_at,
      'version', NEW.version),
    NEW.updated_at);
END;

CREATE TRIGGER directory_delete_event AFTER DELETE ON directory
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('DIRECTORY_MUTATE', 'delete', OLD.key, OLD.version,
    json_object('key', OLD.key, 'type', OLD.type, 'target', OLD.target, 'auth', OLD.auth,
      'content', OLD.content, 'updated_at', OLD.updated_at, 'category', OLD.category,
      'allowed_categories', OLD.allowed_categories, 'seq', OLD.seq, 'enabled', OLD.enabled,
      'planner_visible', OLD.planner_visible, 'planner_rank', OLD.planner_rank,
      'input_schema', OLD.input_schema, 'examples', OLD.examples, 'sensitive', OLD.sensitive,
      'output_schema', OLD.output_schema,
      'written_by', (SELECT written_by FROM directory_deletions WHERE key = OLD.key), 'approval', OLD.approval, 'runner', OLD.runner, 'includes', OLD.includes, 'created_at', OLD.created_at,
      'version', OLD.version),
    NULL,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

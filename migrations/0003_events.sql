-- The append-only event log. Triggers on directory write one DIRECTORY_MUTATE
-- event per insert, update and delete, carrying the row before and after, so a
-- mutation and its record land atomically in one statement on every backend
-- (SQLite, libSQL, D1 — none of which needs an interactive transaction for it).
CREATE TABLE events (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  kind     TEXT NOT NULL,
  action   TEXT NOT NULL,
  key      TEXT NOT NULL,
  version  INTEGER,
  before   TEXT,
  after    TEXT,
  at       TEXT NOT NULL
);
CREATE INDEX events_key ON events (key, id);

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

CREATE TRIGGER directory_insert_event AFTER INSERT ON directory
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('DIRECTORY_MUTATE', 'insert', NEW.key, NEW.version, NULL,
    json_object('key', NEW.key, 'type', NEW.type, 'target', NEW.target, 'auth', NEW.auth,
      'content', NEW.content, 'updated_at', NEW.updated_at, 'category', NEW.category,
      'allowed_categories', NEW.allowed_categories, 'seq', NEW.seq, 'enabled', NEW.enabled,
      'planner_visible', NEW.planner_visible, 'planner_rank', NEW.planner_rank,
      'input_schema', NEW.input_schema, 'examples', NEW.examples, 'sensitive', NEW.sensitive,
      'runner', NEW.runner, 'includes', NEW.includes, 'created_at', NEW.created_at,
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
      'runner', OLD.runner, 'includes', OLD.includes, 'created_at', OLD.created_at,
      'version', OLD.version),
    json_object('key', NEW.key, 'type', NEW.type, 'target', NEW.target, 'auth', NEW.auth,
      'content', NEW.content, 'updated_at', NEW.updated_at, 'category', NEW.category,
      'allowed_categories', NEW.allowed_categories, 'seq', NEW.seq, 'enabled', NEW.enabled,
      'planner_visible', NEW.planner_visible, 'planner_rank', NEW.planner_rank,
      'input_schema', NEW.input_schema, 'examples', NEW.examples, 'sensitive', NEW.sensitive,
      'runner', NEW.runner, 'includes', NEW.includes, 'created_at', NEW.created_at,
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
      'runner', OLD.runner, 'includes', OLD.includes, 'created_at', OLD.created_at,
      'version', OLD.version),
    NULL,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

-- A row may declare its output: output_schema, a JSON Schema object (type
-- "object") its result conforms to. It is part of the callable contract
-- (rowcall.ContractFingerprint) and of a row's history, so the directory's
-- event triggers are made again with it in each snapshot, and with the
-- approval column (0019) too.
ALTER TABLE directory ADD COLUMN output_schema TEXT;

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
      'output_schema', NEW.output_schema, 'approval', NEW.approval, 'runner', NEW.runner, 'includes', NEW.includes, 'created_at', NEW.created_at,
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
      'output_schema', OLD.output_schema, 'approval', OLD.approval, 'runner', OLD.runner, 'includes', OLD.includes, 'created_at', OLD.created_at,
      'version', OLD.version),
    json_object('key', NEW.key, 'type', NEW.type, 'target', NEW.target, 'auth', NEW.auth,
      'content', NEW.content, 'updated_at', NEW.updated_at, 'category', NEW.category,
      'allowed_categories', NEW.allowed_categories, 'seq', NEW.seq, 'enabled', NEW.enabled,
      'planner_visible', NEW.planner_visible, 'planner_rank', NEW.planner_rank,
      'input_schema', NEW.input_schema, 'examples', NEW.examples, 'sensitive', NEW.sensitive,
      'output_schema', NEW.output_schema, 'approval', NEW.approval, 'runner', NEW.runner, 'includes', NEW.includes, 'created_at', NEW.created_at,
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
      'output_schema', OLD.output_schema, 'approval', OLD.approval, 'runner', OLD.runner, 'includes', OLD.includes, 'created_at', OLD.created_at,
      'version', OLD.version),
    NULL,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

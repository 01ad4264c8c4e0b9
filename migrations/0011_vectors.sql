-- Finding rows by meaning (docs/vectors.md): one embedding per row and model. The
-- vector is dim little-endian float32 values in a BLOB (the layout libSQL's
-- F32_BLOB uses, so its vector functions read it as it is); text_sha256 is
-- rowcall.EmbedHash of the model and the text embedded, so a row whose text
-- changed, or a new model, is seen as stale and embedded again. The same
-- table on SQLite, libSQL and D1 (the worker keeps its vectors in Vectorize).
CREATE TABLE vectors (
  key         TEXT NOT NULL,
  model       TEXT NOT NULL,   -- rowcall.EmbedModel.ID(): provider/name/dim
  dim         INTEGER NOT NULL,
  text_sha256 BLOB NOT NULL,
  vector      BLOB NOT NULL CHECK (length(vector) = 4 * dim),
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (model, key)
);
CREATE INDEX vectors_key ON vectors (key);

-- A deleted row's vectors go with it, in the same statement, whoever deletes it.
CREATE TRIGGER directory_delete_vectors AFTER DELETE ON directory
BEGIN DELETE FROM vectors WHERE key = OLD.key; END;

-- Vector writes are events (kind VECTOR, no row snapshot), so a host that keeps
-- an in-memory index sees another host's vectors on its next look at the
-- event log, as the dispatcher's cache sees rows.
CREATE TRIGGER vectors_insert_event AFTER INSERT ON vectors
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('VECTOR', 'insert', NEW.key, NULL, NULL, json_object('model', NEW.model), NEW.updated_at);
END;
CREATE TRIGGER vectors_update_event AFTER UPDATE ON vectors
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('VECTOR', 'update', NEW.key, NULL, NULL, json_object('model', NEW.model), NEW.updated_at);
END;
CREATE TRIGGER vectors_delete_event AFTER DELETE ON vectors
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('VECTOR', 'delete', OLD.key, NULL, json_object('model', OLD.model), NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

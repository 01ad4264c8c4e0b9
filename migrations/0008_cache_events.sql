-- Everything a call reads about its row — the row, its module, its breaker —
-- now moves the event log, so a host may cache it per newest event id.

-- Module changes go into the event log too, as MODULE_MUTATE events: the
-- history of which code an fn row could run, and one counter (the newest event
-- id) that moves whenever anything a call depends on changes, so a host may
-- cache rows, contracts and module digests and still see every edit on the
-- next call.
CREATE TRIGGER modules_insert_event AFTER INSERT ON modules
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('MODULE_MUTATE', 'insert', NEW.name, NEW.version, NULL,
    json_object('name', NEW.name, 'digest', NEW.digest, 'size', NEW.size, 'version', NEW.version), NEW.updated_at);
END;

CREATE TRIGGER modules_update_event AFTER UPDATE ON modules
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('MODULE_MUTATE', 'update', NEW.name, NEW.version,
    json_object('name', OLD.name, 'digest', OLD.digest, 'size', OLD.size, 'version', OLD.version),
    json_object('name', NEW.name, 'digest', NEW.digest, 'size', NEW.size, 'version', NEW.version), NEW.updated_at);
END;

CREATE TRIGGER modules_delete_event AFTER DELETE ON modules
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('MODULE_MUTATE', 'delete', OLD.name, OLD.version,
    json_object('name', OLD.name, 'digest', OLD.digest, 'size', OLD.size, 'version', OLD.version), NULL,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

-- Nothing looks receipts up by key and time, and on D1 every index is another
-- row written per receipt: drop it (the id, trace and seq indexes stay).
DROP INDEX IF EXISTS receipts_key;

-- Breaker changes are events too (kind BREAKER), so a host that caches a row's
-- breaker state with the row sees a breaker open or close on the next call.
CREATE TRIGGER breakers_insert_event AFTER INSERT ON breakers
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('BREAKER', 'insert', NEW.key, NULL, NULL, json_object('failures', NEW.failures, 'opened_at', NEW.opened_at), NEW.updated_at);
END;
CREATE TRIGGER breakers_update_event AFTER UPDATE ON breakers
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('BREAKER', 'update', NEW.key, NULL, json_object('failures', OLD.failures, 'opened_at', OLD.opened_at),
    json_object('failures', NEW.failures, 'opened_at', NEW.opened_at), NEW.updated_at);
END;
CREATE TRIGGER breakers_delete_event AFTER DELETE ON breakers
BEGIN
  INSERT INTO events (kind, action, key, version, before, after, at)
  VALUES ('BREAKER', 'delete', OLD.key, NULL, json_object('failures', OLD.failures, 'opened_at', OLD.opened_at), NULL,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

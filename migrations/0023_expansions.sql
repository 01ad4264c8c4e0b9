-- The questions a model wrote for a row's text (internal/expand), by the
-- fingerprint of the text it was sent (the call's body, which holds the
-- row's key): a text that comes back (an MCP server flipping between two
-- tool definitions) takes its questions from here instead of another paid
-- call. questions is a JSON array; receipt is the call that wrote them.
CREATE TABLE expansions (
  fingerprint TEXT PRIMARY KEY,  -- rowcall.Fingerprint of the call's body
  key         TEXT NOT NULL,
  questions   TEXT NOT NULL,
  receipt     TEXT NOT NULL,     -- inv_…
  created_at  TEXT NOT NULL
);
CREATE INDEX expansions_key ON expansions (key, created_at);

-- A deleted row's remembered questions go with it.
CREATE TRIGGER directory_delete_expansions AFTER DELETE ON directory
BEGIN DELETE FROM expansions WHERE key = OLD.key; END;

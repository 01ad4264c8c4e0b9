-- OAuth 2.1 sign-in for MCP clients (docs/mcp.md). An access token is an
-- ordinary capability token (tokens); client_id says which OAuth client holds
-- it. Codes and refresh tokens are stored only as their SHA-256.
ALTER TABLE tokens ADD COLUMN client_id TEXT;

-- Clients that registered themselves (RFC 7591). used_at is the first
-- consent; a client never used is forgotten after a day.
CREATE TABLE oauth_clients (
  client_id     TEXT PRIMARY KEY,
  name          TEXT,
  logo_uri      TEXT,
  redirect_uris TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  used_at       TEXT
);
CREATE INDEX oauth_clients_created ON oauth_clients (created_at);

-- Authorization requests waiting for the owner's consent in the console.
CREATE TABLE oauth_requests (
  id             TEXT PRIMARY KEY,
  client_id      TEXT NOT NULL,
  client_name    TEXT,
  logo_uri       TEXT,
  redirect_uri   TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  state          TEXT,
  resource       TEXT NOT NULL,
  scope          TEXT,
  expires_at     TEXT NOT NULL,
  done_at        TEXT
);

CREATE TABLE oauth_codes (
  code_sha256    TEXT PRIMARY KEY,
  token_id       TEXT NOT NULL,
  client_id      TEXT NOT NULL,
  redirect_uri   TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  resource       TEXT NOT NULL,
  expires_at     TEXT NOT NULL,
  used_at        TEXT
);

-- Refresh tokens: each use rotates to a new one; a used one presented again
-- revokes the token (the whole family: every refresh token of a grant
-- refreshes the same capability token).
CREATE TABLE oauth_refresh (
  refresh_sha256 TEXT PRIMARY KEY,
  token_id       TEXT NOT NULL,
  client_id      TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  used_at        TEXT
);

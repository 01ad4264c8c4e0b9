-- Connection providers the host registered itself (docs/mcp.md "Importing a
-- server that needs a sign-in"): the client an MCP server's authorization
-- server issued by dynamic client registration (RFC 7591), one per server.
-- sealed is the AES-GCM ciphertext of the provider's endpoints, client id
-- and client secret under the operator's key key_id
-- (ROWCALL_CONNECTIONS_KEY), bound to name.
CREATE TABLE connection_providers (
  name       TEXT PRIMARY KEY,
  server     TEXT NOT NULL,
  key_id     TEXT NOT NULL,
  sealed     BLOB NOT NULL,
  created_at TEXT NOT NULL
);

-- Callers' own upstream credentials (docs/tokens.md#connections): one row per
-- holder (a capability token's id, or "owner") and provider. sealed is the
-- AES-GCM ciphertext of the access and refresh tokens under the operator's key
-- key_id (ROWCALL_CONNECTIONS_KEY), bound to holder and provider; no token is
-- stored in the clear.
CREATE TABLE connections (
  holder     TEXT NOT NULL,
  provider   TEXT NOT NULL,
  key_id     TEXT NOT NULL,
  sealed     BLOB NOT NULL,
  expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (holder, provider)
);

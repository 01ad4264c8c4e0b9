-- People (docs/people.md): the organisation's people, bound to their OpenID
-- provider's issuer and subject, with the role that says what they may do;
-- their browser sessions (the cookie's secret stored only as its SHA-256);
-- sign-ins begun and not yet finished (the state stored as its SHA-256,
-- taken once). A token a person mints or an OAuth consent they give names
-- them (tokens.person_id); a receipt names the person behind its call
-- (person_iss, person_sub), and keeps naming them after they are gone.
CREATE TABLE people (
  id          TEXT PRIMARY KEY,
  issuer      TEXT NOT NULL,
  subject     TEXT NOT NULL,
  email       TEXT NOT NULL DEFAULT '',
  name        TEXT NOT NULL DEFAULT '',
  user_name   TEXT NOT NULL DEFAULT '',
  role        TEXT NOT NULL DEFAULT '',
  role_from   TEXT NOT NULL DEFAULT '',
  groups      TEXT NOT NULL DEFAULT '[]',
  categories  TEXT NOT NULL DEFAULT '["*"]',
  disabled_at TEXT NOT NULL DEFAULT '',
  created_at  TEXT NOT NULL,
  seen_at     TEXT NOT NULL DEFAULT '',
  UNIQUE (issuer, subject)
);
CREATE INDEX people_user_name ON people (user_name);

CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,
  person_id   TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  idle_until  TEXT NOT NULL,
  revoked_at  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_person ON sessions (person_id);

CREATE TABLE logins (
  state       TEXT PRIMARY KEY,
  nonce       TEXT NOT NULL,
  verifier    TEXT NOT NULL,
  return_to   TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

ALTER TABLE tokens ADD COLUMN person_id TEXT NOT NULL DEFAULT '';
CREATE INDEX tokens_person ON tokens (person_id) WHERE person_id <> '';
ALTER TABLE approvals ADD COLUMN person_id TEXT NOT NULL DEFAULT '';
ALTER TABLE receipts ADD COLUMN person_iss TEXT;
ALTER TABLE receipts ADD COLUMN person_sub TEXT;

-- The refresh grace (api/oauth.go, sqlstore/oauth.go). gen is a refresh
-- token's place in its grant: 1 for the code's, its parent's + 1 for a
-- rotation's. The refresh token just rotated may be used again for a
-- minute, unless one of a later generation was used: then it, or an older
-- one, is a replay. A refresh keeps the access token's previous secret good
-- until prev_until (the same minute), so a client open twice is not signed
-- out by its other half.
ALTER TABLE oauth_refresh ADD COLUMN gen INTEGER NOT NULL DEFAULT 0;
CREATE INDEX oauth_refresh_grant ON oauth_refresh (token_id, gen);
ALTER TABLE tokens ADD COLUMN prev_secret_sha256 TEXT;
ALTER TABLE tokens ADD COLUMN prev_until TEXT;
CREATE INDEX tokens_prev_secret ON tokens (prev_secret_sha256) WHERE prev_secret_sha256 IS NOT NULL;

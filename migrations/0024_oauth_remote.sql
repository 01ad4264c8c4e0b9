-- The address an OAuth registration or authorization request came from
-- (api/oauth.go's remoteAddress: an IPv6 address's /64), so that one source
-- gets only its share of the server's bounds (docs/security.md).
ALTER TABLE oauth_clients ADD COLUMN remote TEXT;
ALTER TABLE oauth_requests ADD COLUMN remote TEXT;

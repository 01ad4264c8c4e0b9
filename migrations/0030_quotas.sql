-- Quotas an operator sets on a tenant (docs/tenants.md, PATCH
-- /operator/tenants/NAME), kept in the tenant's own database and enforced
-- there: whatever path writes a row (one at a time, an import, an MCP
-- server's tools), the database refuses a new key past the rows quota, so no
-- writer can forget the check. A directory without a quota has no row here
-- and the trigger's condition is NULL: nothing is refused.
CREATE TABLE IF NOT EXISTS quotas (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);

CREATE TRIGGER IF NOT EXISTS directory_rows_quota BEFORE INSERT ON directory
WHEN NOT EXISTS (SELECT 1 FROM directory WHERE key = NEW.key)
  AND (SELECT COUNT(*) FROM directory) >= (SELECT value FROM quotas WHERE name = 'rows')
BEGIN
  SELECT RAISE(ABORT, 'quota_exceeded:rows');
END;

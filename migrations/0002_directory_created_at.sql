-- created_at entered the seed's production table out of band; a rebuild adds it
-- in a migration, as the seed says it should.
ALTER TABLE directory ADD COLUMN created_at TEXT;

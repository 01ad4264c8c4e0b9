-- The newest event that is not a vector's (kind VECTOR: the vectors table's
-- own writes) is what the dispatcher's row cache, the registry's ETag and the
-- receipt writer's check compare (Store.LastEvent): embedding a row changes
-- no row. This partial index makes that MAX(id) one index seek, however many
-- vector events follow the last directory change (a reindex writes one a row).
CREATE INDEX events_directory ON events (id) WHERE kind <> 'VECTOR';

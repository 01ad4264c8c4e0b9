-- The shared count's arrival time in microseconds (tat_us), not milliseconds:
-- a rate above 1000/second refills a slot in under a millisecond, which
-- tat_ms rounded to 0, that is to no rate at all.
ALTER TABLE token_usage RENAME COLUMN tat_ms TO tat_us;
UPDATE token_usage SET tat_us = tat_us * 1000;

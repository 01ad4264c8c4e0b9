-- Limits and budgets per token (rowcall.Limits): the token's rate, burst and
-- budgets as minted, in JSON; NULL for a token without limits.
ALTER TABLE tokens ADD COLUMN limits TEXT;

-- The shared count of the tokens' limits, one row per token that has a rate or
-- a calls-per-day count, so every host on one database (sqld, D1) counts the
-- same calls. tat_ms is the rate's theoretical arrival time (GCRA, a token
-- bucket kept as one number: the bucket is full when tat_ms <= now); calls is
-- how many calls passed the gate on day (UTC, YYYY-MM-DD). One UPSERT takes a
-- call or refuses it, so two hosts cannot both take the last one.
CREATE TABLE token_usage (
  token_id TEXT PRIMARY KEY,
  tat_ms   INTEGER NOT NULL,
  day      TEXT NOT NULL,
  calls    INTEGER NOT NULL
);

-- Budgets sum cost_usd over a token's receipts in the current day or month.
CREATE INDEX receipts_token_started ON receipts (token_id, started_at);

-- A webhook's rate-limit bucket in a row of its own (docs/deliveries.md, "Pace"), the one row the
-- claim locks to pace it (delivery-engine/sql/claim.sql). It was kept in the webhook's row
-- (pace_tokens, pace_at, migration 020), which everything else that writes a webhook locks too: the
-- API's edits, auto-disable as outcomes are recorded, a receiver's Retry-After. A claim meeting one of
-- those passed the webhook over (SKIP LOCKED) and rewrote the whole webhook row to take a token. Here
-- the claim locks and updates only this narrow row, and nothing else writes it but setRateLimit
-- (webhooks/rate-limit.ts), which gives a new limit a full bucket (and removes the row with the limit).
--
-- tokens as of refilled_at, refilled at the webhook's rate_limit_per_second up to its rate_limit_burst.
-- Every webhook with a rate limit has a row; one found without (its limit set by an older replica)
-- gets a full bucket from the claim that meets it, and is paced from the next claim on.
--
-- Upgrading while an older replica still runs: filled from the webhooks' own columns, so the buckets
-- in use carry on where they were. An older replica keeps drawing from those columns until it stops,
-- so for that moment a limit may let through up to twice its rate (each version honours its own
-- bucket); order is not affected, and nothing is lost either way. The old columns stay (an older
-- replica reads them) and are no longer written by this version.
CREATE TABLE webhook_pace (
  webhook_id  bigint PRIMARY KEY REFERENCES webhooks (id) ON DELETE CASCADE,
  tokens      double precision NOT NULL,
  refilled_at timestamptz NOT NULL
);

INSERT INTO webhook_pace (webhook_id, tokens, refilled_at)
SELECT id, COALESCE(pace_tokens, rate_limit_burst), COALESCE(pace_at, now()) FROM webhooks
 WHERE rate_limit_per_second IS NOT NULL;

-- Order per rollout and pace per webhook (docs/deliveries.md, "Order" and "Pace").
--
-- deliveries.rollout_id / rollout_position: the rollout (deployments.id) a delivery's event belongs to
-- and the event's place in it (0 for its first event, as recorded in emitted_events). A delivery is
-- claimed only when no earlier event of its rollout is unfinished for its webhook (queued, in flight or
-- waiting as an automatic retry): the claim asks the partial index below, one probe per candidate.
-- Null for deliveries of no rollout (test events, replays), which wait for nothing and hold nothing.
-- The columns never change after the insert, so claims stay HOT updates (001).
--
-- The three tables are locked first, a webhook before its deliveries: the order in which deleting a
-- webhook takes them (its trigger deletes the deliveries, 003). Altering deliveries first and webhooks
-- last deadlocked with an older replica deleting a webhook during an upgrade (Postgres then failed the
-- delete: a 500 from that replica's API). Locked up front, the delete waits for this migration instead.
LOCK TABLE webhooks, deliveries, scheduled_retries IN ACCESS EXCLUSIVE MODE;
ALTER TABLE deliveries
  ADD COLUMN rollout_id bigint,
  ADD COLUMN rollout_position smallint;
CREATE INDEX deliveries_unfinished_by_rollout ON deliveries (webhook_id, rollout_id, rollout_position)
  WHERE delivered_at IS NULL AND rollout_id IS NOT NULL;

-- A failed delivery waiting for its automatic retry still holds its rollout's later events back.
ALTER TABLE scheduled_retries
  ADD COLUMN rollout_id bigint,
  ADD COLUMN rollout_position smallint;
CREATE INDEX scheduled_retries_by_rollout ON scheduled_retries (webhook_id, rollout_id, rollout_position)
  WHERE rollout_id IS NOT NULL;

-- rate_limit_per_second / rate_limit_burst: the opt-in rate limit, both null (none) or both set. The
-- bucket is kept here, not in a process, so every replica draws from the same one: pace_tokens as of
-- pace_at, refilled at the rate up to the burst, taken by the claim that holds the row's lock.
-- throttled_until / throttled_reason: a receiver's 429 or 503 with Retry-After paused the webhook's sends
-- until then (capped by DELIVERY_RETRY_AFTER_MAX_SECONDS).
ALTER TABLE webhooks
  ADD COLUMN rate_limit_per_second double precision CHECK (rate_limit_per_second > 0 AND rate_limit_per_second <= 10000),
  ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst BETWEEN 1 AND 10000),
  ADD COLUMN pace_tokens double precision,
  ADD COLUMN pace_at timestamptz,
  ADD COLUMN throttled_until timestamptz(3),
  ADD COLUMN throttled_reason text,
  ADD CHECK ((rate_limit_per_second IS NULL) = (rate_limit_burst IS NULL));

-- Opt-in automatic retries and opt-in auto-disable (README, "Retry policy and auto-disable").
--
-- retry_max_attempts: null is the spec's default, no automatic retry; otherwise a failed attempt sent
-- by a worker is followed by the next one, up to this many attempts of the event in all.
-- auto_disable_after_failures / auto_disable_min_seconds: null, or both set: the webhook is disabled
-- once that many deliveries in a row failed over at least that long. consecutive_failures and
-- failing_since count them (kept only for webhooks with auto-disable on); disabled_reason and
-- disabled_at say why and when it was disabled automatically, and go when it is enabled again.
-- owner_generation: the Webhook resource generation last reconciled into the row, so the operator
-- re-enables an auto-disabled webhook only when its resource's spec changed, not on every reconcile.
ALTER TABLE webhooks
  ADD COLUMN retry_max_attempts integer CHECK (retry_max_attempts BETWEEN 1 AND 6),
  ADD COLUMN auto_disable_after_failures integer CHECK (auto_disable_after_failures BETWEEN 1 AND 1000),
  ADD COLUMN auto_disable_min_seconds integer CHECK (auto_disable_min_seconds BETWEEN 0 AND 2592000),
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
  ADD COLUMN failing_since timestamptz(3),
  ADD COLUMN disabled_reason text,
  ADD COLUMN disabled_at timestamptz(3),
  ADD COLUMN owner_generation bigint,
  ADD CHECK ((auto_disable_after_failures IS NULL) = (auto_disable_min_seconds IS NULL));

-- A retry waits in state 'scheduled' with locked_until = when it is due and locked_by null. The
-- workers' due-row condition (state = 'queued' OR locked_until < now) takes it once that time passes,
-- so the claim statement is unchanged, and the row is durable like any queued one. state and
-- locked_until stay out of every index (claims remain HOT updates, see 001 and 002).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_state_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_state_check
  CHECK (state IN ('queued', 'scheduled', 'in_flight', 'done'));

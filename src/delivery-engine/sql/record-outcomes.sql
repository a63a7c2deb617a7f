-- Records the outcomes of finished attempts, and what they set off for webhooks that opted into a retry
-- policy or auto-disable (docs/deliveries.md, "Retry policy and auto-disable"), in one statement: a
-- failure, its retry and what it does to its webhook commit together, so no crash between them loses one.
-- Run by the workers (queue.ts, before they claim) and by replays and test events.
--
-- Each outcome is one position in the arrays: :ids (the deliveries) and, at the same position, its
-- columns :success, :request_timestamps, :signatures, :durations_ms, :status_codes, :response_bodies,
-- :error_messages and :delivered_at_ms (when it was known, in ms since the epoch).
-- The arrays are read once, together (`outcomes`), and joined to the rows by id: looking each value up
-- by its id's position (array_position, per column and row) walked the id array a dozen times a row,
-- about half the statement's time (docs/benchmarks.md, "Where a delivery's Postgres time goes").
-- :shaped_bodies, :shaped_body_headers and :request_headers are null unless a shaped delivery (a format,
-- a signature scheme or custom headers: delivery-shape.ts) is in the batch; an envelope delivery keeps
-- nothing more than its outcome. :retry_in_ms (the wait before the next attempt, null for none) and
-- :counted (auto-disable counts it) are null and false for an outcome with no follow-up; with none in
-- the batch, every follow-up below works on no rows and locks nothing.
WITH outcomes AS MATERIALIZED (
  -- One row per outcome; an array left null (the shaped ones, when the batch has no shaped delivery)
  -- reads as nulls. Materialized: read once, hashed by the join below.
  SELECT * FROM unnest(:ids::bigint[], :success::boolean[], :request_timestamps::bigint[], :signatures::text[],
                       :durations_ms::int[], :status_codes::int[], :response_bodies::text[], :error_messages::text[],
                       :delivered_at_ms::float8[], :shaped_bodies::text[], :shaped_body_headers::jsonb[],
                       :request_headers::jsonb[], :retry_in_ms::float8[], :counted::boolean[])
           AS o (id, success, request_timestamp, signature, duration_ms, status_code, response_body, error_message,
                 delivered_at_ms, shaped_body, shaped_body_headers, request_headers, retry_in_ms, counted)
), recorded AS (
  -- An attempt that finished is a fact: written whoever holds the row's lease now, unless the row already
  -- has an outcome. When a lease ran out (a database outage, a stalled process) and another worker sent
  -- the row again, the first outcome recorded stands and the later one is dropped (the receiver saw the
  -- same delivery twice, which at-least-once allows). `state <> 'done'` rather than the partial index's
  -- `delivered_at IS NULL` (the same by the table's CHECK): the rows are found by primary key, by the
  -- id array (one index scan) rather than by the join, which would descend the index once per outcome.
  UPDATE deliveries d
     SET state = 'done', success = o.success, request_timestamp = o.request_timestamp, signature = o.signature,
         duration_ms = o.duration_ms, status_code = o.status_code, response_body = o.response_body,
         error_message = o.error_message, delivered_at = to_timestamp(o.delivered_at_ms / 1000),
         locked_by = NULL, locked_until = NULL,
         -- What a shaped delivery sent; a row's kept body (a replay's) stays when its attempt sent nothing.
         body = COALESCE(o.shaped_body, d.body), body_headers = COALESCE(o.shaped_body_headers, d.body_headers),
         request_headers = o.request_headers
    FROM outcomes o
   WHERE d.id = ANY (:ids::bigint[]) AND d.id = o.id AND d.state <> 'done'
  RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.attempt_number, d.success, d.delivered_at,
            d.status_code, d.rollout_id, d.rollout_position, o.retry_in_ms, COALESCE(o.counted, false) AS counted
), policies AS (
  -- The webhooks of outcomes with a follow-up, locked in id order (two statements never wait on each
  -- other in opposite orders). The lock also keeps a webhook from being deleted under a retry being
  -- inserted, as FOR KEY SHARE does for every other writer of deliveries (migration 003).
  SELECT w.id, w.enabled, w.retry_max_attempts FROM webhooks w
   WHERE w.id IN (SELECT webhook_id FROM recorded WHERE counted OR (retry_in_ms IS NOT NULL AND NOT success))
   ORDER BY w.id
     FOR NO KEY UPDATE
), tallies AS (
  -- Auto-disable (webhooks/auto-disable.ts): per webhook, the batch's failures after its last success in
  -- the batch (a success restarts the run), the first of them, and whether a receiver answered 410 Gone.
  SELECT r.webhook_id, s.last_success,
         count(*) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity'))::int AS failures,
         min(r.delivered_at) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity')) AS first_failure,
         COALESCE(bool_or(r.status_code = 410) FILTER (WHERE NOT r.success AND r.delivered_at > COALESCE(s.last_success, '-infinity')), false) AS gone
    FROM recorded r
    JOIN (SELECT webhook_id, max(delivered_at) FILTER (WHERE success) AS last_success
            FROM recorded WHERE counted GROUP BY webhook_id) s USING (webhook_id)
   WHERE r.counted
   GROUP BY r.webhook_id, s.last_success
), runs AS (
  -- The webhook's run of failures after this batch, and whether it ends the webhook's deliveries: the
  -- run reached after_failures and began at least min_duration_seconds ago, or the receiver answered
  -- 410 Gone, which asks for no more deliveries (Standard Webhooks).
  SELECT w.id AS webhook_id, a.failures, a.failing_since, t.gone,
         w.enabled AND (t.gone OR (a.failures >= w.auto_disable_after_failures
           AND a.failing_since <= clock_timestamp() - w.auto_disable_min_seconds * interval '1 second')) AS disables
    FROM tallies t
    JOIN policies p ON p.id = t.webhook_id
    JOIN webhooks w ON w.id = t.webhook_id
   CROSS JOIN LATERAL (
     SELECT CASE WHEN t.last_success IS NULL THEN w.consecutive_failures ELSE 0 END + t.failures AS failures,
            CASE WHEN t.failures = 0 THEN NULL
                 WHEN t.last_success IS NULL AND w.consecutive_failures > 0 THEN COALESCE(w.failing_since, t.first_failure)
                 ELSE t.first_failure END AS failing_since
   ) a
   WHERE w.auto_disable_after_failures IS NOT NULL AND (t.failures > 0 OR w.consecutive_failures > 0)
), counted AS (
  -- The reason is recorded for the webhook's owner; the Webhook resource tells a 410 apart by how it
  -- begins (goneReasonStart, webhooks/auto-disable.ts).
  UPDATE webhooks w
     SET consecutive_failures = r.failures,
         failing_since = r.failing_since,
         enabled = w.enabled AND NOT r.disables,
         disabled_reason = CASE
           WHEN NOT r.disables THEN w.disabled_reason
           WHEN r.gone THEN 'Disabled automatically: the receiver answered 410 Gone, which asks for no more deliveries (auto_disable). Enable the webhook again once its receiver wants them.'
           ELSE format('Disabled automatically: %s deliveries in a row failed since %s (auto_disable: after %s failures over at least %s s). Enable the webhook again once its receiver works.',
                       r.failures, to_char(r.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                       w.auto_disable_after_failures, w.auto_disable_min_seconds) END,
         disabled_at = CASE WHEN r.disables THEN clock_timestamp() ELSE w.disabled_at END,
         updated_at = CASE WHEN r.disables THEN greatest(clock_timestamp(), w.updated_at + interval '1 millisecond')
                           ELSE w.updated_at END
    FROM runs r
   WHERE w.id = r.webhook_id
  RETURNING w.id, r.disables
), retried AS (
  -- The next attempt of each failed delivery whose webhook (still enabled, and not disabled by this very
  -- batch: its retry would never be sent) allows one, numbered one above the event's highest attempt,
  -- waiting in scheduled_retries (migration 011 says why not in deliveries) until queueDueRetries
  -- (queue.ts) queues it. It keeps its rollout's place: later events of the rollout wait for it.
  INSERT INTO scheduled_retries (webhook_id, event_id, event_type, attempt_number, due_at, rollout_id, rollout_position)
  SELECT r.webhook_id, r.event_id, r.event_type, n.attempt_number,
         clock_timestamp() + r.retry_in_ms * interval '1 millisecond', r.rollout_id, r.rollout_position
    FROM recorded r
    JOIN policies p ON p.id = r.webhook_id
   CROSS JOIN LATERAL (
     SELECT GREATEST(r.attempt_number, (SELECT max(x.attempt_number) FROM deliveries x
                                         WHERE x.webhook_id = r.webhook_id AND x.event_id = r.event_id
                                           AND x.attempt_number > 1)) + 1 AS attempt_number
   ) n
   WHERE NOT r.success AND r.retry_in_ms IS NOT NULL AND p.enabled
     AND n.attempt_number <= p.retry_max_attempts
     AND r.webhook_id NOT IN (SELECT id FROM counted WHERE disables)
   ORDER BY r.id
  ON CONFLICT (webhook_id, event_id, attempt_number) DO NOTHING
  RETURNING id
), disabled AS (
  SELECT array_agg(id ORDER BY id) AS ids FROM counted WHERE disables
)
-- One row: what the follow-ups did. The webhooks disabled just now are told to every replica (NOTIFY,
-- delivered when this commits) under :disabled_channel.
SELECT (SELECT count(*) FROM recorded)::int AS recorded,
       (SELECT count(*) FROM retried)::int AS retries_scheduled,
       d.ids AS disabled_ids,
       CASE WHEN d.ids IS NOT NULL THEN pg_notify(:disabled_channel, array_to_string(d.ids, ',')) END::text AS notified
  FROM disabled d

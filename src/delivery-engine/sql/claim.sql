-- Claims up to :limit due deliveries for worker :worker, leased for :lease_ms, fairly: the slots are
-- shared evenly across the webhooks that have due rows, as fair queues do, those holding the fewest
-- rows in this worker first. A webhook never seen, one seen before a restart and one whose backlog is
-- younger than everyone else's get a turn in the same claim as the oldest backlog.
-- Due rows are the queued ones and in-flight ones whose lease expired (their worker died), but for
-- :recording_ids, the rows whose outcomes this worker is recording at this moment (queue.ts runs the
-- record beside the claim): one whose lease ran out is finished, not due.
--
-- What this worker knows of the receivers (receiver-limits.ts) comes in as parallel arrays:
-- :known_ids, :allowances (how many more rows each may be given), :restricted (its receiver is slow:
-- restricted webhooks together get at most :restricted_budget rows) and :held (rows it holds now);
-- a webhook not among them may get :default_allowance.
--
-- Run on connections with claimSessionSettings (queue.ts): planned once, generically, and without
-- sequential or bitmap scans, so the plan reads the head of the queue whatever the statistics say
-- (test/integration/claim-plans.test.ts counts the index entries it reads).
WITH RECURSIVE unfinished_webhooks (webhook_id) AS (
  -- The distinct webhooks with unfinished rows, one index descent each (a loose index scan over
  -- deliveries_unfinished (webhook_id, id), migration 014), not a walk over their rows.
  SELECT min(webhook_id) FROM deliveries WHERE delivered_at IS NULL
  UNION ALL
  SELECT (SELECT min(d.webhook_id) FROM deliveries d WHERE d.delivered_at IS NULL AND d.webhook_id > u.webhook_id)
    FROM unfinished_webhooks u WHERE u.webhook_id IS NOT NULL
), gates AS (
  -- Pace (docs/deliveries.md, "Pace"), the same for every replica: a receiver's pause (the webhook's
  -- throttled_until, from a 429 or 503 with Retry-After) takes none of its rows, and a rate limit is a
  -- token bucket in the webhook's pace row (migration 021: tokens as of refilled_at, refilled at
  -- rate_limit_per_second up to rate_limit_burst). That row is the one this claim locks to pace the
  -- webhook, SKIP LOCKED: a replica claiming it at this moment is passed over, never waited for (and
  -- the webhook's own row, which edits and auto-disable lock, is only read).
  SELECT w.id AS webhook_id, w.rate_limit_per_second IS NOT NULL AS paced, p.tokens
    FROM unfinished_webhooks u
    JOIN webhooks w ON w.id = u.webhook_id
    LEFT JOIN LATERAL (
      SELECT LEAST(w.rate_limit_burst, b.tokens + w.rate_limit_per_second
                   * GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - b.refilled_at))) AS tokens
        FROM webhook_pace b
       WHERE b.webhook_id = w.id AND w.rate_limit_per_second IS NOT NULL
         FOR NO KEY UPDATE SKIP LOCKED
    ) p ON true
   WHERE NOT COALESCE(w.throttled_until > clock_timestamp(), false)
     AND (w.rate_limit_per_second IS NULL OR p.tokens IS NOT NULL)
), new_buckets AS (
  -- A webhook whose limit an older replica set has no pace row yet: a full one, used from the next claim.
  INSERT INTO webhook_pace (webhook_id, tokens, refilled_at)
  SELECT w.id, w.rate_limit_burst, clock_timestamp()
    FROM unfinished_webhooks u
    JOIN webhooks w ON w.id = u.webhook_id
   WHERE w.rate_limit_per_second IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM webhook_pace b WHERE b.webhook_id = w.id)
   ORDER BY w.id
  ON CONFLICT (webhook_id) DO NOTHING
), eligible AS (
  -- Those a row may go to now: within their allowance and their whole tokens, restricted ones only
  -- while the restricted budget lasts.
  SELECT g.webhook_id, g.paced, x.allowance, COALESCE(a.held, 0) AS held, COALESCE(a.restricted, false) AS restricted
    FROM gates g
    LEFT JOIN unnest(:known_ids::bigint[], :allowances::int[], :restricted::boolean[], :held::int[])
           AS a (webhook_id, allowance, restricted, held) ON a.webhook_id = g.webhook_id
   CROSS JOIN LATERAL (
     SELECT LEAST(COALESCE(a.allowance, :default_allowance::int), floor(g.tokens)::int) AS allowance
   ) x
   WHERE x.allowance > 0 AND (NOT COALESCE(a.restricted, false) OR :restricted_budget::int > 0)
), shares AS (
  -- The claim's rows split evenly across them, the one left over going to those holding the fewest, none
  -- past its allowance: a claim reads about as many rows as it takes, however many webhooks have due
  -- rows (at most one row each when more webhooks than the claim has rows).
  SELECT e.*, LEAST(e.allowance, :limit::int / e.webhooks + (e.rank <= :limit::int % e.webhooks)::int,
                    CASE WHEN e.restricted THEN :restricted_budget::int END) AS share
    FROM (SELECT eligible.*, row_number() OVER (ORDER BY held, webhook_id) AS rank, count(*) OVER () AS webhooks
            FROM eligible) e
), candidates AS (
  -- Each webhook's oldest due rows, as many as its share, locked as they are read (SKIP LOCKED: rows
  -- other workers are claiming are passed over, not waited for). A webhook that had more due rows than
  -- its share says so (`cut`: the worker claims again at once; a restricted one is held back by the
  -- budget, which the worker knows of).
  -- Order per rollout (docs/deliveries.md, "Order"): a delivery of a rollout's event goes only once every
  -- earlier event of that rollout has finished for its webhook: none queued, in flight or waiting for
  -- its automatic retry (the partial indexes of migration 020: one probe each).
  SELECT c.id, c.nth, s.restricted, NOT s.restricted AND c.nth = s.share AND s.share < s.allowance AS cut
    FROM shares s
   CROSS JOIN LATERAL (
     SELECT l.id, row_number() OVER (ORDER BY l.id) AS nth FROM (
       SELECT d.id FROM deliveries d
        WHERE d.webhook_id = s.webhook_id AND d.delivered_at IS NULL
          AND (d.state = 'queued' OR (d.locked_until < clock_timestamp() AND d.id <> ALL (:recording_ids::bigint[])))
          AND NOT (d.rollout_id IS NOT NULL AND (
                EXISTS (SELECT 1 FROM deliveries o
                         WHERE o.webhook_id = d.webhook_id AND o.rollout_id = d.rollout_id
                           AND o.rollout_position < d.rollout_position AND o.delivered_at IS NULL)
             OR EXISTS (SELECT 1 FROM scheduled_retries o
                         WHERE o.webhook_id = d.webhook_id AND o.rollout_id = d.rollout_id
                           AND o.rollout_position < d.rollout_position)))
        ORDER BY d.id
        LIMIT s.share
          FOR UPDATE SKIP LOCKED
     ) l
   ) c
   WHERE s.share > 0
), chosen AS (
  -- All of them, restricted webhooks' rows no further than the budget, round by round. Rows read but
  -- not chosen stay locked only until the statement commits.
  SELECT id FROM candidates WHERE NOT restricted
  UNION ALL
  (SELECT id FROM candidates WHERE restricted ORDER BY nth, id LIMIT :restricted_budget::int)
), claimed AS (
  -- Looked up by an id array computed first rather than joined: a plan made once must not depend on how
  -- many rows it expects.
  UPDATE deliveries d
     SET state = 'in_flight', locked_by = :worker::text,
         locked_until = clock_timestamp() + :lease_ms::float8 * interval '1 millisecond'
   WHERE d.id = ANY (ARRAY(SELECT id FROM chosen))
  RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.attempt_number, d.rollout_id, d.body, d.body_headers,
            d.created_at
), pace_taken AS (
  -- What the claim took from each paced webhook's bucket (its pace row, locked by `gates`), counted
  -- once per webhook. A webhook given no row keeps its pace row as it was: its level is refilled from
  -- refilled_at whenever it is read, the same as if it were written now.
  UPDATE webhook_pace b
     SET tokens = g.tokens - t.taken, refilled_at = clock_timestamp()
    FROM (SELECT webhook_id, count(*) AS taken FROM claimed GROUP BY webhook_id) t
    JOIN gates g ON g.webhook_id = t.webhook_id
   WHERE b.webhook_id = t.webhook_id AND g.paced
)
-- The claimed rows with what a send needs (worker.ts, ClaimedDelivery in claim.ts). `shape` is null for
-- a webhook that chose nothing but the default; else its format, signature scheme, headers and opt-in to
-- rollout details with the event's details (read only then), and the body the row kept (a replay's: sent
-- again as it was) (delivery-shape.ts).
SELECT c.id, c.webhook_id, c.event_type, w.url, w.secret, e.envelope AS body,
       EXTRACT(EPOCH FROM c.created_at)::float8 * 1000 AS queued_at_ms, c.attempt_number, c.rollout_id,
       1000 / w.rate_limit_per_second AS pace_interval_ms, w.enabled, w.retry_max_attempts,
       w.auto_disable_after_failures IS NOT NULL AS counted_by_policy,
       EXISTS (SELECT 1 FROM candidates WHERE cut) AS more_due,
       CASE WHEN w.format = 'envelope' AND w.signature_scheme = 'hmac-sha256' AND w.headers IS NULL
                 AND NOT w.rollout_details AND c.body IS NULL AND c.body_headers IS NULL THEN NULL
            ELSE json_build_object('format', w.format, 'cloudevents_mode', w.cloudevents_mode,
                   'template', w.template, 'template_content_type', w.template_content_type,
                   'signature_scheme', w.signature_scheme, 'headers', w.headers, 'event_id', c.event_id,
                   'body', c.body, 'body_headers', c.body_headers, 'rollout_details', w.rollout_details,
                   'rollout', e.rollout_details) END AS shape
  FROM claimed c
  JOIN webhooks w ON w.id = c.webhook_id
  JOIN events e ON e.id = c.event_id
 ORDER BY c.id

-- Records events and their deliveries (the outbox write, emit.ts): one event row per event and one
-- delivery per enabled webhook of the event's project subscribed to it and whose filters take it. Run
-- inside the caller's transaction, so the rollout's update, its events and their deliveries commit
-- together: nothing is sent that was not recorded, nothing recorded is lost.
--
-- The events come as parallel arrays, one position each: :ids, :project_ids, :event_types,
-- :rollout_ids and :rollout_positions (the rollout an event belongs to and its place in it, null for
-- none), :subjects (a jsonb array: what filters match, event-filters.ts), :rollout_details (a jsonb
-- array: what the event says beyond its payload, null for none; docs/formats.md) and :envelopes, the envelopes'
-- texts joined by newlines (JSON.stringify never writes a raw newline, and a text[] would escape every
-- quote of the JSON and make Postgres parse it back); :created_at for all of them.
--
-- The hand-over (docs/deliveries.md, "Handing over at emit"): with :hand_over_worker set (the emitting
-- process's own worker, which has room: engine.ts handOverLease), an emit whose deliveries may all go
-- now is inserted leased to that worker, for :lease_ms, and returned to it (a row per delivery): it
-- saves the NOTIFY, the wake-up and a claim of a row or two. Otherwise every delivery is queued and the
-- workers are woken by NOTIFY on :channel, which Postgres delivers when the transaction commits.
WITH given AS (
  SELECT g.*, :subjects::jsonb -> (g.position::int - 1) AS subject,
         NULLIF(:rollout_details::jsonb -> (g.position::int - 1), 'null'::jsonb) AS rollout_details
    FROM unnest(:ids::uuid[], :project_ids::bigint[], :event_types::text[], string_to_array(:envelopes::text, E'\n'),
                :rollout_ids::bigint[], :rollout_positions::smallint[])
           WITH ORDINALITY AS g (id, project_id, event_type, envelope, rollout_id, rollout_position, position)
), new_events AS (
  INSERT INTO events (id, project_id, event_type, envelope, created_at, rollout_details)
  SELECT id, project_id, event_type, envelope, :created_at::timestamptz, rollout_details FROM given
), subscribed AS (
  -- Locked as a foreign key check would, once per webhook: a webhook deleted meanwhile takes the new rows
  -- along when it commits after us, or is skipped if it committed first.
  SELECT w.id, w.project_id, w.events, w.filters, w.url, w.secret, w.retry_max_attempts,
         w.auto_disable_after_failures IS NOT NULL AS counted_by_policy,
         w.rate_limit_per_second IS NULL AND NOT COALESCE(w.throttled_until > clock_timestamp(), false) AS unpaced,
         CASE WHEN w.format = 'envelope' AND w.signature_scheme = 'hmac-sha256' AND w.headers IS NULL
                   AND NOT w.rollout_details THEN NULL
              ELSE json_build_object('format', w.format, 'cloudevents_mode', w.cloudevents_mode,
                     'template', w.template, 'template_content_type', w.template_content_type,
                     'signature_scheme', w.signature_scheme, 'headers', w.headers,
                     'rollout_details', w.rollout_details) END AS shape
    FROM webhooks w
   WHERE w.project_id = ANY (:project_ids::bigint[]) AND w.enabled AND w.events && :event_types::text[]
     FOR KEY SHARE
), targets AS (
  -- Each event's webhooks. A webhook without filters takes every event; a part of its filters the event
  -- cannot answer (no workload known, say) does not match: a filter is a promise of what the receiver
  -- gets. Label rules are Kubernetes': NotIn and DoesNotExist hold when the label is absent. The values
  -- come from the rows, never from SQL text. Joined by nested loops over a handful of rows (OFFSET 0
  -- keeps the subquery as written): planned generically, plain joins became hash joins, each building
  -- its hash table anew on every emit for a row or two.
  SELECT w.id AS webhook_id, g.id AS event_id, g.event_type, g.position, g.rollout_id, g.rollout_position
    FROM given g
   CROSS JOIN LATERAL (
     SELECT s.id FROM subscribed s
      WHERE s.project_id = g.project_id AND g.event_type = ANY (s.events)
        AND (s.filters IS NULL OR (
          (NOT (s.filters ? 'environments') OR COALESCE((s.filters -> 'environments') ? (g.subject ->> 'environment'), false))
          AND (NOT (s.filters ? 'kinds') OR COALESCE((s.filters -> 'kinds') ? (g.subject ->> 'kind'), false))
          AND (NOT (s.filters ? 'label_selector') OR (
            jsonb_typeof(g.subject -> 'labels') = 'object'
            AND (g.subject -> 'labels') @> COALESCE(s.filters -> 'label_selector' -> 'match_labels', '{}')
            AND NOT EXISTS (
              SELECT 1 FROM jsonb_array_elements(COALESCE(s.filters -> 'label_selector' -> 'match_expressions', '[]')) e
               WHERE NOT CASE e ->> 'operator'
                 WHEN 'In' THEN COALESCE((e -> 'values') ? (g.subject -> 'labels' ->> (e ->> 'key')), false)
                 WHEN 'NotIn' THEN NOT COALESCE((e -> 'values') ? (g.subject -> 'labels' ->> (e ->> 'key')), false)
                 WHEN 'Exists' THEN (g.subject -> 'labels') ? (e ->> 'key')
                 WHEN 'DoesNotExist' THEN NOT ((g.subject -> 'labels') ? (e ->> 'key'))
                 ELSE false END)))))
      OFFSET 0
   ) w
), lease AS (
  -- Whether this emit's deliveries are handed over, all or none. Only where a claim would take them now,
  -- by rules that need nothing the claim's own (claim.sql) decides: they fit the worker's free slots
  -- (:hand_over_limit) and each webhook's allowance (:allowance_ids / :allowances, :default_allowance
  -- for one the worker has not seen: receiver-limits.ts); no subscribed webhook has a rate limit or a
  -- receiver's pause (only the claim paces); and none is a rollout's later event (rollout_position > 0),
  -- which may have to wait for an earlier one: those are queued, and the claim orders them.
  SELECT COALESCE(count(*) <= :hand_over_limit::int AND bool_and(p.n <= COALESCE(
           (:allowances::int[])[array_position(:allowance_ids::bigint[], p.webhook_id)], :default_allowance::int)), false) AS leased
    FROM (SELECT t.webhook_id, count(*) OVER (PARTITION BY t.webhook_id) AS n FROM targets t) p
   WHERE :hand_over_worker::text IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM subscribed s WHERE NOT s.unpaced)
     AND NOT EXISTS (SELECT 1 FROM targets t WHERE t.rollout_position > 0)
), queued AS (
  -- Numbered in the order the events were given, so a rollout's created is queued before its ready.
  INSERT INTO deliveries (webhook_id, event_id, event_type, state, locked_by, locked_until, rollout_id, rollout_position)
  SELECT t.webhook_id, t.event_id, t.event_type,
         CASE WHEN l.leased THEN 'in_flight' ELSE 'queued' END,
         CASE WHEN l.leased THEN :hand_over_worker::text END,
         CASE WHEN l.leased THEN clock_timestamp() + :lease_ms::float8 * interval '1 millisecond' END,
         t.rollout_id, t.rollout_position
    FROM targets t CROSS JOIN lease l
   ORDER BY t.position, t.webhook_id
  RETURNING id, webhook_id, event_id, event_type, attempt_number, rollout_id
)
-- Handed over: a row per delivery with what its send needs (no JSON to build or parse). Queued: one row
-- with their number, and the NOTIFY (Postgres folds a transaction's identical notifications into one).
SELECT q.id, q.webhook_id, q.event_id, q.event_type, q.attempt_number, q.rollout_id, w.url, w.secret,
       w.retry_max_attempts, w.counted_by_policy, w.shape, NULL::int AS queued, NULL::text AS notified
  FROM queued q
 CROSS JOIN LATERAL (SELECT * FROM subscribed s WHERE s.id = q.webhook_id OFFSET 0) w
 WHERE (SELECT leased FROM lease)
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*)::int,
       CASE WHEN count(*) > 0 THEN pg_notify(:channel::text, '') END::text
  FROM queued q
HAVING NOT (SELECT leased FROM lease)

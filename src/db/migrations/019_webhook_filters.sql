-- Opt-in filters of a webhook (docs/api.md, Filters): which events of its subscription it gets, by the
-- workload's labels (a Kubernetes label selector), the rollout's environment and the workload's kind.
-- One JSON object in the API's own shape, e.g.
--   {"environments": ["production"], "kinds": ["Deployment"],
--    "label_selector": {"match_labels": {"app": "payments"},
--                       "match_expressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}}
-- with only the parts the webhook sets; null (every existing webhook) gets every event it subscribes to.
-- jsonb so the emit statement matches in SQL where it picks the subscribers: `?` for the lists, `@>`
-- (containment) for match_labels, a scan of the few expressions otherwise. Added without a default and
-- nullable: no rewrite, and a release before this one keeps working against it (it never reads it).
ALTER TABLE webhooks
  ADD COLUMN filters jsonb CHECK (filters IS NULL OR jsonb_typeof(filters) = 'object');

-- Rollout details (docs/formats.md, "Rollout details"): what a rollout event says beyond the payload
-- (the workload, images old → new, version labels, links; on deployment.failed what the pods report).
-- events.rollout_details holds them as computed when the event was recorded, so a replay and every
-- replica send the same; null for an event without them (test events, events recorded before this).
-- webhooks.rollout_details is the opt-in: false, the default, sends every body exactly as before.
-- A nullable column and a constant default are catalog changes only: neither table is rewritten.
ALTER TABLE events ADD COLUMN rollout_details jsonb;
ALTER TABLE webhooks ADD COLUMN rollout_details boolean NOT NULL DEFAULT false;

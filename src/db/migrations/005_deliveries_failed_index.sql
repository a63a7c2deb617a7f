-- The dashboard and `hooks deliveries list --failed` page through a webhook's failed attempts. With the
-- by-webhook index alone, a page of failures among many successes reads every success in between.
-- This partial index holds failures only (a minority of rows), so it adds no entry for a successful
-- delivery; its predicate names success and delivered_at, both set once with the outcome, so a
-- worker's claim (state, locked_by, locked_until) stays a HOT update as 001 and 003 intend.
CREATE INDEX deliveries_failed_by_webhook ON deliveries (webhook_id, created_at DESC, id DESC)
  WHERE delivered_at IS NOT NULL AND success = false;

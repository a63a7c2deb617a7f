-- The claim goes round-robin across the webhooks that have due rows (delivery-engine/claim.ts): it finds
-- those webhooks with one index descent each and reads each one's oldest due rows. Keyed by (webhook_id,
-- id) instead of (id), the same partial index serves both, so every write keeps one index entry for
-- unfinished rows, as before. The queue's other readers (queue depth, a webhook's deletion, recovery's
-- "already queued" check) read the same entries, the last two now only their webhook's.
--
-- Built while the migration runs: a database with millions of finished deliveries is read once, during
-- which new deliveries wait (the index is small; the table scan is not). Plan the upgrade for a quiet
-- moment, as for migration 010.
DROP INDEX deliveries_unfinished;
CREATE INDEX deliveries_unfinished ON deliveries (webhook_id, id) WHERE delivered_at IS NULL;

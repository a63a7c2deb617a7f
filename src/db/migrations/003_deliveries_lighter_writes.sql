-- Every delivery row is written twice: when it is queued and when its outcome is recorded (a new row
-- version, so every index gets a new entry). Two per-row costs of those writes are removed here
-- (measured on a 20k burst: 35 → 26 µs of Postgres time per delivery).
--
-- 1. UNIQUE (webhook_id, event_id, attempt_number) put every row into an index keyed by a random uuid,
--    a different index page for nearly every write. First attempts are unique by construction: one row
--    per subscribed webhook per event, and an event id is the primary key of events. Only retries can
--    collide (two at once for the same event), so only they are indexed; a retry's number is one above
--    the highest retry, or 2.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_webhook_id_event_id_attempt_number_key;
CREATE UNIQUE INDEX deliveries_retry_attempts ON deliveries (webhook_id, event_id, attempt_number)
  WHERE attempt_number > 1;

-- 2. The foreign key to webhooks looked the webhook up for each inserted row. Its ON DELETE CASCADE is
--    now this trigger (it fires for every way a webhook row goes, a project's cascade included), and
--    whoever writes deliveries locks their webhook rows FOR KEY SHARE once per statement, which is what
--    the key check did per row: a webhook being deleted meanwhile waits for that write to commit and
--    then takes its rows along, or is already gone and gets none.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_webhook_id_fkey;

CREATE FUNCTION delete_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- One statement per partial index that covers the rows.
  DELETE FROM deliveries WHERE webhook_id = OLD.id AND delivered_at IS NOT NULL;
  DELETE FROM deliveries WHERE webhook_id = OLD.id AND delivered_at IS NULL;
  RETURN NULL;
END
$$;

CREATE TRIGGER webhooks_delete_deliveries AFTER DELETE ON webhooks
  FOR EACH ROW EXECUTE FUNCTION delete_webhook_deliveries();

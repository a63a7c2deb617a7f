-- A webhook's delete trigger removed its finished deliveries, then its unfinished ones, in two
-- statements with a snapshot each (READ COMMITTED). A delivery whose outcome a worker recorded between
-- the two was in neither: not yet finished for the first statement, no longer unfinished for the
-- second, and it stayed behind, an orphan of a deleted webhook (seen under load in the test "waits for
-- an uncommitted emit and removes what it queued"). A delivery only ever goes from unfinished to
-- finished, so removing the unfinished ones first and the finished ones second misses none.
CREATE OR REPLACE FUNCTION delete_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- One statement per partial index that covers the rows, unfinished first (see above).
  DELETE FROM deliveries WHERE webhook_id = OLD.id AND delivered_at IS NULL;
  DELETE FROM deliveries WHERE webhook_id = OLD.id AND delivered_at IS NOT NULL;
  RETURN NULL;
END
$$;

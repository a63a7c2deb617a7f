-- Retention (retention/sweeper.ts) removes attempts and events older than RETENTION_DAYS.
--
-- Attempts are found without a new index: ids grow with created_at, so the sweeper walks the primary
-- key from the oldest id in bounded windows and stops at the first window holding a newer row.
--
-- Events need one: their ids are random (v4 uuids), and nothing else orders them by age. created_at
-- only grows, so this index is appended at its right edge: a cheap write per event, not per delivery.
CREATE INDEX events_by_age ON events (created_at);

-- An old event stays while an attempt that is kept still needs its envelope. First attempts are
-- written with their event, so they expire with it; only later attempts (replays, recoveries,
-- automatic retries, all numbered above 1) can be younger than their event. This index holds those
-- alone, a small minority of rows, so first attempts add no entry here.
CREATE INDEX deliveries_later_attempts_by_event ON deliveries (event_id) WHERE attempt_number > 1;

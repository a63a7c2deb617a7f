-- The two request headers computed at send time, kept so that a delivery record shows the request
-- exactly as it went out (the dashboard's delivery detail, the API's request_headers): X-Webhook-
-- Timestamp in Unix seconds, and X-Webhook-Signature (an HMAC digest, not the secret), null when the
-- webhook had no secret. Both null for attempts recorded before this version, and for attempts that
-- were never sent (a refused destination, a secret this replica could not decrypt).
--
-- Written with the outcome, by the update that is already not HOT (it sets delivered_at and success,
-- which index predicates name); no index covers them, so a claim stays a HOT update (001, 003).
ALTER TABLE deliveries ADD COLUMN request_timestamp bigint, ADD COLUMN signature text;

-- How long each attempt took, in milliseconds, from the start of the send (connecting included) to the
-- end of reading the response or the failure: what the dashboard's delivery page shows. Null for
-- attempts that sent no request (a refused destination, a webhook disabled meanwhile) and for attempts
-- recorded before this version. Written with the outcome, like request_timestamp (009): no index.
ALTER TABLE deliveries ADD COLUMN duration_ms integer;

-- Delivery formats, signature schemes and custom request headers (docs/formats.md). Every column has the
-- default of a webhook that chose none, so existing webhooks keep sending today's envelope, byte for byte.
--
-- webhooks.headers: the custom request headers as one JSON object {"Name": "value"}, sealed with the
-- secret keys like the signing secret (src/secrets); null when the webhook has none. Their names, which
-- are not secret, are kept apart in clear (header_names, sorted), so reads never open the values.
ALTER TABLE webhooks
  ADD COLUMN format text NOT NULL DEFAULT 'envelope',
  ADD COLUMN cloudevents_mode text NOT NULL DEFAULT 'structured',
  ADD COLUMN template text,
  ADD COLUMN template_content_type text,
  ADD COLUMN signature_scheme text NOT NULL DEFAULT 'hmac-sha256',
  ADD COLUMN headers text,
  ADD COLUMN header_names text[] NOT NULL DEFAULT '{}';

-- A delivery of a webhook with a format other than the envelope, a signature scheme other than the
-- default, or custom headers keeps what it sent: `body` (the rendered body; null means the event's
-- envelope, as for every envelope delivery), `body_headers` (Content-Type and the format's own headers,
-- which a replay sends again with the same body) and `request_headers` (every header as sent, custom
-- header values replaced by asterisks). All null for envelope deliveries: the engine's writes and claims
-- of those stay as they were. Written with the outcome, by the update that is not HOT anyway.
ALTER TABLE deliveries
  ADD COLUMN body text,
  ADD COLUMN body_headers jsonb,
  ADD COLUMN request_headers jsonb;

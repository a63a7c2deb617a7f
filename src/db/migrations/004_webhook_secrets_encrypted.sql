-- Webhook signing secrets are stored encrypted (AES-256-GCM, keys outside the database). Rows written
-- before this version hold clear text and are marked false here; the service seals them at start-up
-- (and `webhook-operator secrets reencrypt` does the same), then sets the mark.
ALTER TABLE webhooks ADD COLUMN secret_encrypted boolean NOT NULL DEFAULT false;

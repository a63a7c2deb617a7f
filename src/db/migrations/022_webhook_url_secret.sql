-- url_secret: the webhook's URL is a credential (a Slack, Teams, Discord or Google Chat incoming-webhook
-- URL carries its token in the path), so the API shows it masked, its scheme and host kept and the rest
-- as ********, in the webhook and in delivery errors (docs/formats.md, "A chat URL is a secret").
-- Opt-in: false, the default, answers exactly as before. A constant default is a catalog change only:
-- the table is not rewritten.
ALTER TABLE webhooks ADD COLUMN url_secret boolean NOT NULL DEFAULT false;

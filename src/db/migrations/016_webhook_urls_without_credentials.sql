-- Credentials in a webhook URL (user:password@) are refused by the API and, since this version, by the
-- Webhook resource's CRD and the operator. Rows written before through a Webhook resource (which did
-- not check) lose them here: they were never sent (a delivery connects to the URL's origin and path,
-- without its userinfo), only shown by every read of the webhook and in delivery error messages.
UPDATE webhooks SET url = regexp_replace(url, '^([A-Za-z]+://)[^/?#]*@', '\1')
 WHERE url ~ '^[A-Za-z]+://[^/?#]*@';

-- A key revoked through the API stays revoked. The configured key (API_KEY / API_KEY_FILE) is
-- registered at every start-up; before, one revoked through the API came back with the next restart.
-- The digests of revoked keys are kept (a digest, as in api_keys, never the key), and start-up does not
-- register a configured key found here: it logs that the key was revoked and what to do.
CREATE TABLE revoked_api_keys (
  key_hash   bytea PRIMARY KEY,
  revoked_at timestamptz NOT NULL DEFAULT now()
);

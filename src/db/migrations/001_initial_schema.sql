-- Service state: projects (namespaces), deployments (rollouts), webhooks, events, deliveries, API keys.
-- Timestamps are stored at millisecond precision because the API prints them with milliseconds and
-- updated_at must be strictly later after every update as the client sees it.

CREATE TABLE projects (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text NOT NULL,
  slug        text NOT NULL UNIQUE,
  repo_url    text,
  created_at  timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  updated_at  timestamptz(3) NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX projects_newest_first ON projects (created_at DESC, id DESC);

-- One row per rollout. Kubernetes rollouts are keyed by (Deployment UID, revision); rollouts recorded
-- through other means leave those null. emitted_events records which deployment.* events were already
-- emitted so each fires once per rollout across restarts and leader changes.
CREATE TABLE deployments (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id       bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  source_uid       text,
  revision         text,
  name             text NOT NULL,
  environment      text NOT NULL,
  branch           text,
  commit_sha       text,
  commit_message   text,
  url              text,
  status           text NOT NULL CHECK (status IN ('pending', 'ready', 'succeeded', 'failed', 'cancelled')),
  error_message    text,
  started_at       timestamptz(3),
  finished_at      timestamptz(3),
  emitted_events   text[] NOT NULL DEFAULT '{}',
  created_at       timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  updated_at       timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (source_uid, revision)
);
CREATE INDEX deployments_by_project ON deployments (project_id, created_at DESC, id DESC);

-- owner is "namespace/name" of the Webhook custom resource that declares this webhook, or null for
-- webhooks created through the API. The secret is kept because every delivery is signed with it; it
-- is never returned by the API.
CREATE TABLE webhooks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  url         text NOT NULL,
  secret      text,
  events      text[] NOT NULL,
  enabled     boolean NOT NULL,
  owner       text UNIQUE,
  created_at  timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  updated_at  timestamptz(3) NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhooks_by_project ON webhooks (project_id, created_at DESC, id DESC);

-- The envelope text is fixed when the event is recorded: it is the body sent, byte for byte.
-- Events and their deliveries are written together by one statement (delivery-engine/emit.ts) and
-- events are never deleted, so events.project_id and deliveries.event_id carry no foreign keys: their
-- per-row checks were half the cost of recording an event (measured: 3 ms of 8 per 500 events).
CREATE TABLE events (
  id          uuid PRIMARY KEY,
  project_id  bigint,
  event_type  text NOT NULL,
  envelope    text NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT clock_timestamp()
);

-- The outbox. A row is queued when written, in_flight while a worker holds its lease, done once the
-- attempt's outcome is recorded (and only then has delivered_at). Only done rows are attempts in the
-- API's sense.
--
-- Claiming a row changes state, locked_by and locked_until. No index covers those columns (index
-- predicates included), so Postgres rewrites the claimed row in place on its page (a HOT update) and
-- adds no index entries; fillfactor 70 leaves the room on the page for that. The partial indexes
-- therefore tell finished from unfinished rows by delivered_at, which is set once, with the outcome.
CREATE TABLE deliveries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id      bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id        uuid NOT NULL,
  event_type      text NOT NULL,
  attempt_number  integer NOT NULL DEFAULT 1 CHECK (attempt_number >= 1),
  state           text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'in_flight', 'done')),
  locked_by       text,
  locked_until    timestamptz(3),
  success         boolean,
  status_code     integer,
  response_body   text,
  error_message   text,
  created_at      timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  delivered_at    timestamptz(3),
  UNIQUE (webhook_id, event_id, attempt_number),
  CHECK ((state = 'done') = (delivered_at IS NOT NULL))
) WITH (fillfactor = 70);
-- Workers look only at unfinished rows; a partial index keeps that scan small however long the history.
CREATE INDEX deliveries_unfinished ON deliveries (id) WHERE delivered_at IS NULL;
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, created_at DESC, id DESC) WHERE delivered_at IS NOT NULL;

-- API keys are stored as SHA-256 digests of the key; project_ids null means an admin key.
CREATE TABLE api_keys (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name          text NOT NULL,
  key_hash      bytea NOT NULL UNIQUE,
  project_ids   bigint[],
  created_at    timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  last_used_at  timestamptz(3)
);

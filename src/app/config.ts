import type { BlockList } from "node:net";
import { z } from "zod";
import { keyWeakness, minimumKeyBits, minimumKeyLength } from "../api-keys/key-strength.js";
import type { DatabaseTimeouts } from "../db/connection-options.js";
import { readDatabaseUrlFile } from "../db/database-url-file.js";
import { parseAllowList } from "../delivery-engine/destination-policy.js";
import type { DeliverySettings } from "../delivery-engine/engine.js";
import { longestSendMs } from "../delivery-engine/timing.js";
import type { HttpBounds } from "../http/connection-bounds.js";
import { trustedProxyRanges } from "../http/trusted-proxies.js";
import type { TokenAuthSettings } from "../kube-auth/reviewer.js";
import type { LogFormat } from "../logger.js";
import type { KubernetesMode } from "../operator/kube-config.js";
import type { OperatorConfig } from "../operator/manager.js";
import { parseLinkTemplates } from "../operator/rollouts/rollout-links.js";
import { type WorkloadKind, workloadKinds } from "../operator/rollouts/workload-kinds.js";
import type { SecretKeysConfig } from "../secrets/keys.js";
import { defaultPreviewSettings, type PreviewSettings } from "../webhooks/preview-admission.js";
import { metricsTokenMinLength, metricsTokenOf } from "./metrics-token.js";

// Every setting the process reads, parsed once at start-up. Each service receives only the part it
// needs. Names are the environment variables of docs/configuration.md, generated from this schema.
const booleanFromEnv = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((value) => value === "true" || value === "1" || value === "yes")
  .meta({ accepts: "`true` or `false` (also `1`/`0`, `yes`/`no`)" });

/** Digits only: "1e3", "0x1F" or "8080abc" are mistakes worth reporting, not numbers to guess at. */
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min).max(max))
    .meta({
      accepts: max === Number.MAX_SAFE_INTEGER ? `whole number ≥ ${min}` : `whole number ${min}–${max}`,
    });

/**
 * A comma-separated list, its entries trimmed and empty ones dropped, then parsed by `parse`, whose
 * error becomes the setting's message with an `example` of a list that would do.
 */
const commaSeparated = <T>(parse: (entries: string[]) => T, example: string) =>
  z.string().transform((value, ctx) => {
    const entries = value
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    try {
      return { entries, parsed: parse(entries) };
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        message: `${(error as Error).message}; write a comma-separated list such as "${example}"`,
      });
      return z.NEVER;
    }
  });

/** One WEBHOOK_SECRETS_WITHOUT_LABEL entry: `*`, `namespace/*` or `namespace/name` (DNS names). */
const secretsWithoutLabelEntry =
  /^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?\/(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*))$/;

const databaseUrl = z.url({ protocol: /^postgres(ql)?$/ });

/** DATABASE_READY_TIMEOUT_MS unset. */
export const defaultReadyTimeoutMs = 2_000;

/** DELIVERY_RETRY_DELAYS_MS unset: 5 s, 1 min, 5 min, 30 min, 2 h. */
export const defaultRetryDelaysMs = [5_000, 60_000, 300_000, 1_800_000, 7_200_000];

// Each setting's description is its entry in docs/configuration.md, which
// scripts/generate-config-docs.ts writes from this schema (a test fails when the page is stale).
export const configSchema = z.object({
  HOST: z
    .string()
    .min(1)
    .default("0.0.0.0")
    .describe("Address the HTTP listener binds: `/api`, the dashboard, `/metrics`, `/healthz`, `/readyz`."),
  PORT: wholeNumber(0, 65_535).default(8080).describe("Port of the HTTP listener (`0`: any free port)."),
  // What a peer without a key can hold of the HTTP server, and how often a source may fail to authenticate.
  HTTP_MAX_CONNECTIONS: wholeNumber(1, 1_000_000)
    .default(4_096)
    .describe(
      "Open HTTP connections at most (lowered to leave 1024 of the process's file handles free). Past it, connections not serving a request are closed to make room, those that never sent a complete request first, so idle peers cannot lock out clients with a key.",
    ),
  HTTP_HEADERS_TIMEOUT_MS: wholeNumber(1_000, 600_000)
    .default(10_000)
    .describe(
      "How long a connection may take to send a complete request head, from the moment it opens (or its first byte after a keep-alive pause); then it is closed (408).",
    ),
  HTTP_REQUEST_TIMEOUT_MS: wholeNumber(1_000, 3_600_000)
    .default(30_000)
    .describe(
      "How long a client may take to send a whole request, body included (at least `HTTP_HEADERS_TIMEOUT_MS`); then it is answered 408 and closed. Answers may take longer (a replay waits for its send).",
    ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: wholeNumber(1_000, 600_000)
    .default(5_000)
    .describe("How long an idle keep-alive connection is kept open for its next request."),
  AUTH_FAILURES_PER_MINUTE: wholeNumber(0, 1_000_000)
    .default(60)
    .describe(
      "Refused credentials (API keys, Kubernetes tokens, the metrics token) one client address (an IPv6 one by its /64; see `TRUSTED_PROXIES`) may present in a minute; past it, until the minute ends, its refused credentials are answered 429 with `Retry-After` without a database query, while a valid API key or metrics token still passes, and one warning names the address. `0` turns pacing off.",
    ),
  TRUSTED_PROXIES: commaSeparated(trustedProxyRanges, "10.0.0.0/8,fd00::/8")
    .transform(({ entries, parsed }) => ({ entries, ranges: parsed }))
    .optional()
    .meta({ accepts: "comma-separated CIDRs and addresses" })
    .describe(
      "The proxies (an ingress controller's pods, a load balancer) whose `X-Forwarded-For` names the client: from a peer in these ranges the client's address is read from that header (the nearest address not itself a trusted proxy), and failed authentications are paced by it. Unset: the peer's address, and the header is ignored. Never list ranges that clients connect from directly: they could name any address.",
    ),
  API_KEY_CACHE_TTL_MS: wholeNumber(0, 60_000)
    .default(5_000)
    .describe(
      "How long a replica remembers an API key it verified, so a burst of requests with one key costs one database query. A revoked key stops working at once on the replica that revoked it and within this time on the others. `0`: every request queries the database.",
    ),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info")
    .describe("Least severe level logged."),
  LOG_FORMAT: z
    .enum(["auto", "pretty", "json"])
    .default("auto")
    .describe(
      "How logs are written to stdout: `json` (one JSON object per line, for log collectors), `pretty` (one " +
        "readable line per record, its fields indented below), or `auto`: `pretty` when stdout is a terminal, else `json`.",
    ),
  DATABASE_URL: databaseUrl
    .optional()
    .meta({ accepts: "a `postgres://` or `postgresql://` URL" })
    .describe("`postgres://user:password@host:5432/db`. Unset: an embedded Postgres in `DATA_DIR`."),
  DATABASE_URL_FILE: z
    .string()
    .min(1)
    .optional()
    .meta({ accepts: "a file path" })
    .describe(
      "A file holding the `DATABASE_URL` (a mounted Secret: the password stays out of the environment); its surrounding whitespace is ignored. Not together with `DATABASE_URL`.",
    ),
  DATABASE_POOL_SIZE: wholeNumber(1, 200)
    .default(10)
    .describe(
      "Connections in the API's pool. A replica opens 4 more: the delivery worker's two, its `LISTEN` connection and one for `/readyz`; the leader's controllers have a pool of their own, half this size.",
    ),
  // Connections that cannot hang (docs/operating.md, "When Postgres goes silent").
  DATABASE_CONNECT_TIMEOUT_MS: wholeNumber(100, 600_000)
    .default(5_000)
    .describe(
      "How long opening a connection to Postgres may take (its handshake included), and how long a query waits for a free pooled connection; then it fails (the API answers 503).",
    ),
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber(100, 3_600_000)
    .default(15_000)
    .describe(
      "Postgres cancels a statement of the service that runs longer (`statement_timeout`). When no answer comes back at all (a network that drops packets) the client gives up 5 s after it and closes the connection.",
    ),
  DATABASE_LOCK_TIMEOUT_MS: wholeNumber(100, 3_600_000)
    .default(5_000)
    .describe("Postgres cancels a statement that waits longer for a lock (`lock_timeout`)."),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: wholeNumber(100, 3_600_000)
    .default(30_000)
    .describe(
      "Postgres ends a session left idle inside a transaction longer (`idle_in_transaction_session_timeout`), releasing its locks: a replica cut off mid-transaction holds no rows for longer. Sessions idle outside a transaction (the `LISTEN` connection) are not ended.",
    ),
  DATABASE_KEEPALIVE_IDLE_MS: wholeNumber(1_000, 3_600_000)
    .default(10_000)
    .describe(
      "An idle connection is probed (TCP keepalive) after this long; ten unanswered probes a second apart close it, so a connection to a database that went silent is found dead in about this plus 10 s.",
    ),
  DATABASE_MIGRATION_STATEMENT_TIMEOUT_MS: wholeNumber(1_000, 86_400_000)
    .default(600_000)
    .describe(
      "The statement and lock timeout of the migrations run at start-up, which may rewrite or index large tables and wait for another replica's migration.",
    ),
  DATABASE_READY_TIMEOUT_MS: wholeNumber(100, 60_000)
    .default(defaultReadyTimeoutMs)
    .describe(
      "`/readyz` answers 503 when Postgres has not answered `SELECT 1` (on a connection of its own) within this long; nothing is left waiting after it.",
    ),
  DATA_DIR: z
    .string()
    .min(1)
    .default(".data")
    .describe(
      "Where the embedded Postgres keeps its data (`DATA_DIR/postgres`), and a generated encryption key.",
    ),
  EMBEDDED_POSTGRES_PORT: wholeNumber(1, 65_535)
    .default(5433)
    .describe("Loopback port of the embedded Postgres."),
  API_KEY: z
    .string()
    .superRefine((key, ctx) => {
      const weakness = keyWeakness(key, "the key");
      if (weakness) ctx.addIssue({ code: "custom", message: weakness });
    })
    .optional()
    .meta({ accepts: `at least ${minimumKeyLength} characters and an estimated ${minimumKeyBits} bits` })
    .describe(
      "An admin API key, registered by its digest at start-up. Start-up refuses a weak one: it needs at least 24 characters and an estimated 96 bits (length × log2 of its different characters), which `openssl rand -hex 24` gives. With no key configured and none stored, one is generated and printed once.",
    ),
  API_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A file holding the admin API key (a mounted Kubernetes Secret, say); used when `API_KEY` is unset.",
    ),
  SECRET_ENCRYPTION_KEYS: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Keys the webhooks' signing secrets are encrypted with (AES-256-GCM): base64 of 32 bytes each (`openssl rand -base64 32`), comma-separated, newest first (it encrypts; the others only decrypt).",
    ),
  SECRET_ENCRYPTION_KEYS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The same keys in a file (comma- or line-separated), such as the chart's mounted Secret. With neither set, a key is generated once into `DATA_DIR/secret-encryption-keys` (mode 0600) and start-up warns: fine for one process, but replicas sharing a database need the same keys.",
    ),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(0)
    .optional()
    .describe(
      "How long SIGTERM waits for requests and deliveries in flight. Default: the longest a send can take (`DELIVERY_TIMEOUT_MS` + connect bound + 1 s) plus 5 s, 46000 with the defaults, so sends in flight are finished and recorded instead of sent again after a restart.",
    ),
  DASHBOARD_ENABLED: booleanFromEnv
    .default(true)
    .describe("Serve the web dashboard at `/`. `false`: `/api`, `/metrics` and the health checks only."),
  RETENTION_DAYS: wholeNumber(0, 36_500)
    .default(30)
    .describe("Delivery records and events older than this many days are removed (`0` keeps everything)."),
  WEBHOOKS_PER_PROJECT_LIMIT: wholeNumber(1, 100_000)
    .default(100)
    .describe(
      "The most webhooks one project may have: creating one more through the API answers 409 `limit_reached` and creates nothing. `Webhook` resources are not refused by it (their namespace's RBAC decides who may create them).",
    ),
  DELIVERY_WORKERS: booleanFromEnv
    .default(true)
    .describe(
      "`false`: this replica serves the API only (replays and test events it is asked for still send).",
    ),
  DELIVERY_CONCURRENCY: wholeNumber(1, 1_000)
    .default(64)
    .describe(
      "Deliveries in flight per replica, test events and replays included (it may claim up to half as many again ahead, unsent; test events and replays may take half as many again for a moment).",
    ),
  DELIVERY_PER_WEBHOOK_CONCURRENCY: wholeNumber(1, 1_000)
    .default(16)
    .describe(
      "Deliveries in flight per webhook per replica, so that one slow receiver cannot take every slot.",
    ),
  DELIVERY_TIMEOUT_MS: wholeNumber(1)
    .default(30_000)
    .describe(
      "One deadline over a whole send: connecting, any `1xx` answers, the response head and its body. A send ends by it whatever the receiver does, recorded with the timeout message (a connect that fails within `min(10000, DELIVERY_TIMEOUT_MS)` is a connection failure).",
    ),
  DELIVERY_LEASE_MS: wholeNumber(1_000)
    .default(60_000)
    .describe(
      "How long a claim lasts: a crashed replica's claims are retaken after it. Must cover the longest send (`DELIVERY_TIMEOUT_MS` + `min(10000, DELIVERY_TIMEOUT_MS)` + 1000), else start-up refuses it.",
    ),
  DELIVERY_POLL_INTERVAL_MS: wholeNumber(10)
    .default(2_000)
    .describe("Backstop poll of the queue; workers are normally woken at once by Postgres `LISTEN/NOTIFY`."),
  DELIVERY_RESPONSE_BODY_LIMIT_BYTES: wholeNumber(0, 1_048_576)
    .default(4_096)
    .describe("Receivers' response bodies are stored truncated to this many bytes."),
  DELIVERY_RETRY_DELAYS_MS: z
    .string()
    .default(defaultRetryDelaysMs.join(","))
    .transform((value, ctx) => {
      const parts = value.split(",").map((part) => part.trim());
      if (parts.length !== 5 || parts.some((part) => !/^\d+$/.test(part) || Number(part) > 86_400_000)) {
        ctx.addIssue({
          code: "custom",
          message:
            "must be five comma-separated whole numbers of milliseconds (each at most 86400000), the waits before retries 1 to 5, such as 5000,60000,300000,1800000,7200000",
        });
        return z.NEVER;
      }
      return parts.map(Number);
    })
    .meta({ accepts: "five comma-separated whole numbers, each ≤ 86400000" })
    .describe(
      "The waits before automatic retries 1–5 of a webhook that has a retry policy (before attempts 2–6), each with ±20 % jitter.",
    ),
  // Pace per webhook (docs/deliveries.md, "Pace").
  DELIVERY_RETRY_AFTER_MAX_SECONDS: wholeNumber(0, 86_400)
    .default(3_600)
    .describe(
      "The longest a receiver's `429` or `503` with `Retry-After` pauses its webhook's sends; a longer `Retry-After` (seconds or an HTTP date) is cut to this. A pause lasts at least 1 s whatever this says (`Retry-After: 0` or a date already past included).",
    ),
  // A project's share of the test events and replays, sent while the API request waits (docs/deliveries.md).
  SYNC_SENDS_PER_PROJECT_CONCURRENCY: wholeNumber(1, 1_000)
    .default(8)
    .describe(
      "Test events and replays of one project waiting for their receivers at once, per replica. One more answers 429 with `Retry-After` and records nothing. They also count against `DELIVERY_PER_WEBHOOK_CONCURRENCY` and `DELIVERY_CONCURRENCY` with the workers' sends, and together take at most half of `DELIVERY_CONCURRENCY`.",
    ),
  SYNC_SENDS_PER_PROJECT_PER_MINUTE: wholeNumber(0, 1_000_000)
    .default(120)
    .describe(
      "Pace of one project's test events and replays per replica: a token bucket of this many, refilled evenly over a minute (`0`: no pace). Over it: 429 with `Retry-After`.",
    ),
  SYNC_SENDS_PER_PROJECT_PER_DAY: wholeNumber(0, 100_000_000)
    .default(10_000)
    .describe(
      "The same over a day, which bounds what a project's test events and replays can store: this many times `RETENTION_DAYS` records per replica (`0`: no bound).",
    ),
  // Templates and their previews (docs/formats.md, Limits and errors; docs/api.md, Preview).
  TEMPLATE_THREADS: wholeNumber(1, 64)
    .default(1)
    .describe(
      "Threads that parse and render webhook templates (each started on first use), so that no template holds the event loop; a render still running after 750 ms is stopped by ending its thread. One renders thousands of templates a second.",
    ),
  TEMPLATE_THREAD_IDLE_MS: wholeNumber(1_000, 86_400_000)
    .default(60_000)
    .describe(
      "A template thread that rendered nothing for this long ends, and gives its memory back (about 10 MiB resident each); the next template starts one again.",
    ),
  PREVIEWS_PER_PROJECT_CONCURRENCY: wholeNumber(1, 1_000)
    .default(defaultPreviewSettings.perProjectConcurrency)
    .describe(
      "Previews (`POST …/webhooks/preview`, `…/webhooks/{id}/preview`) of one project rendering at once, per replica. One more answers 429 with `Retry-After`.",
    ),
  PREVIEWS_PER_PROJECT_PER_MINUTE: wholeNumber(0, 1_000_000)
    .default(defaultPreviewSettings.perProjectPerMinute)
    .describe(
      "Pace of one project's previews per replica: a token bucket of this many, refilled evenly over a minute (`0`: no pace). Over it: 429 with `Retry-After`.",
    ),
  DELIVERY_ALLOW_PRIVATE_NETWORKS: booleanFromEnv
    .default(true)
    .describe(
      "`false` refuses loopback and private destinations (127/8, 10/8, 172.16/12, 192.168/16, 100.64/10, ::1, fc00::/7, fec0::/10) unless `DELIVERY_ALLOWED_DESTINATIONS` lists them. Start-up warns while it is `true`; the Helm chart sets `false`.",
    ),
  DELIVERY_ALLOWED_DESTINATIONS: commaSeparated(parseAllowList, "10.96.0.0/12,.svc.cluster.local")
    .transform(({ entries, parsed }) => ({ entries, list: parsed }))
    .optional()
    .meta({ accepts: "comma-separated CIDRs, addresses, host names and `.suffixes`" })
    .describe(
      "Private destinations allowed although `DELIVERY_ALLOW_PRIVATE_NETWORKS=false`: CIDRs or addresses (`10.96.0.0/12`, `fd00::1`), exact host names (`hooks.internal`), or suffixes (`.svc.cluster.local`, `*.svc.cluster.local`). A name entry matches the host name in the webhook's URL. Metadata, link-local, multicast and reserved addresses stay refused.",
    ),
  DELIVERY_ALLOWED_DESTINATIONS_ONLY: booleanFromEnv
    .default(false)
    .describe(
      "`true`: deliveries and test events may reach only what `DELIVERY_ALLOWED_DESTINATIONS` names, public addresses included (an egress allow-list; it must not be empty). A host name must then be listed itself: one that is not is refused without a DNS lookup, and through the API at once (403).",
    ),
  KUBERNETES: z
    .enum(["auto", "true", "false"])
    .default("auto")
    .describe(
      "`auto`: run the controllers when a service account or kubeconfig is found; `true`: require one; `false`: API and workers only (also `serve --no-kubernetes`).",
    ),
  NAMESPACE_SELECTOR: z
    .string()
    .default("")
    .meta({ accepts: "`key=value`, `key!=value`, `key`, `!key`, comma-separated" })
    .describe(
      "Label selector of the namespaces that are projects. Empty: every namespace; `kube-*` never are. A namespace that stops matching has its project withdrawn (hidden from the API, kept) until it matches again.",
    ),
  WATCH_WORKLOAD_KINDS: z
    .string()
    .default(workloadKinds.join(","))
    .transform((value, context) => {
      const kinds = value
        .split(",")
        .map((kind) => kind.trim())
        .filter(Boolean);
      const unknown = kinds.filter((kind) => !(workloadKinds as readonly string[]).includes(kind));
      if (kinds.length === 0) {
        context.addIssue({ code: "custom", message: `name at least one of ${workloadKinds.join(", ")}` });
        return z.NEVER;
      }
      if (unknown.length > 0) {
        context.addIssue({
          code: "custom",
          message: `unknown kind ${unknown.join(", ")}; write a comma-separated list of ${workloadKinds.join(", ")}`,
        });
        return z.NEVER;
      }
      return [...new Set(kinds)] as WorkloadKind[];
    })
    .meta({ accepts: "comma-separated `Deployment`, `StatefulSet`, `DaemonSet`" })
    .describe(
      "Which workloads' rollouts fire `deployment.*` events. A kind the operator may not list (RBAC) is skipped with a warning in the log, until the next leader.",
    ),
  ROLLOUT_FAIL_FAST: booleanFromEnv
    .default(true)
    .describe(
      "Fail a rollout (`deployment.failed`, `error_message` naming the reason) as soon as its new pods have shown a problem that waiting does not mend (an image that cannot be pulled, a crash loop, a missing Secret or ConfigMap key, no node that fits, a readiness probe that keeps failing) for `ROLLOUT_FAIL_FAST_AFTER_SECONDS` without progress, rather than at its progress deadline. `false`: rollouts fail at their deadline only, and the pods are read once, then.",
    ),
  ROLLOUT_FAIL_FAST_AFTER_SECONDS: wholeNumber(30, 86_400)
    .default(120)
    .describe(
      "How long a problem must stand, with no new pod Ready, before `ROLLOUT_FAIL_FAST` fails the rollout: long enough for an image pushed just after its manifest and for a failed pull to be retried three times (the kubelet waits 10, 20, then 40 s).",
    ),
  ROLLOUT_LOG_LINES: wholeNumber(0, 100)
    .default(20)
    .describe(
      "Lines of a crashing (or unready) container's log carried in a failed rollout's details, for webhooks with rollout details. `0`: logs are not read.",
    ),
  ROLLOUT_REDACT_WORDS: z
    .string()
    .default("password,passwd,secret,token,authorization,bearer,credential,api_key,apikey,private_key")
    .transform((value) =>
      value
        .split(",")
        .map((word) => word.trim())
        .filter(Boolean),
    )
    .meta({ accepts: "comma-separated words (no patterns)" })
    .describe(
      "A log line or termination-message line of a failed rollout's details that contains one of these words, in any case, is replaced whole by `[redacted]`. Empty: nothing is redacted.",
    ),
  ROLLOUT_LINKS: z
    .string()
    .default("")
    .transform((value, context) => {
      try {
        return parseLinkTemplates(value);
      } catch (error) {
        context.addIssue({
          code: "custom",
          message: `${(error as Error).message}; write a JSON list such as [{"name":"Grafana","url":"https://grafana.example/d/x?var-namespace={namespace}&var-workload={name}"}]`,
        });
        return z.NEVER;
      }
    })
    .meta({ accepts: 'JSON list of `{"name": …, "url": …}`, at most 10' })
    .describe(
      "Links carried in each rollout event's details (`rollout_details`, docs/formats.md) and shown on chat cards: each url a template whose `{namespace}`, `{name}`, `{kind}`, `{revision}` and `{project}` are filled per rollout, URL-encoded. Empty: no links.",
    ),
  WEBHOOK_SECRETS_WITHOUT_LABEL: z
    .string()
    .default("")
    .transform((value, context) => {
      const entries = value
        .split(",")
        .map((entry) => entry.trim())
        .filter(Boolean);
      const invalid = entries.filter((entry) => !secretsWithoutLabelEntry.test(entry));
      if (invalid.length > 0) {
        context.addIssue({
          code: "custom",
          message: `${invalid.map((entry) => JSON.stringify(entry)).join(", ")}: write namespace/name, namespace/* or *, comma-separated`,
        });
        return z.NEVER;
      }
      return entries;
    })
    .meta({ accepts: "`namespace/name`, `namespace/*` or `*`, comma-separated" })
    .describe(
      "Secrets Webhook resources may use without the label `webhook-operator.io/allow-webhooks=true`: `namespace/name` one Secret, `namespace/*` every Secret of that namespace. Empty: only labelled Secrets. `*` (every Secret, as before 0.2.0) lets whoever may create a Webhook send any Secret of its namespace to a receiver of their choice: for an upgrade's transition only.",
    ),
  POD_NAMESPACE: z
    .string()
    .min(1)
    .optional()
    .describe("Namespace of the leader Lease. Default: the service account's namespace, else `default`."),
  POD_NAME: z
    .string()
    .min(1)
    .optional()
    .describe("This replica's identity in the Lease. Default: `<hostname>-<pid>-<random>`."),
  LEADER_ELECTION_LEASE_NAME: z
    .string()
    .min(1)
    .default("webhook-operator-leader")
    .describe("Name of the Lease."),
  LEADER_ELECTION_LEASE_DURATION_MS: wholeNumber(1_000)
    .default(15_000)
    .describe("How long a lease lasts without renewal before another replica takes over."),
  LEADER_ELECTION_RETRY_PERIOD_MS: wholeNumber(100)
    .default(2_000)
    .describe("How often the leader renews its lease and the others try to take it."),
  INFORMER_RELIST_INTERVAL_MS: wholeNumber(1_000)
    .default(300_000)
    .describe(
      "Periodic full re-list of watched resources, which heals a watch that stalled silently; also how often a missing Gateway API is looked for again.",
    ),
  WEBHOOK_STATUS_RESYNC_INTERVAL_MS: wholeNumber(1_000)
    .default(60_000)
    .describe(
      "How often every Webhook resource's status (its last delivery and delivery health: counts, last success and failure, the Healthy condition) is refreshed; it is written only when it changed.",
    ),
  KUBERNETES_TOKEN_AUTH: booleanFromEnv
    .default(true)
    .describe(
      "In a cluster, `/api` accepts Kubernetes tokens (TokenReview and SubjectAccessReview); `false` turns it off.",
    ),
  KUBERNETES_TOKEN_AUDIENCE: z
    .string()
    .trim()
    .min(1)
    .default("webhook-operator")
    .describe("The audience a token must be issued for (`kubectl create token --audience`)."),
  KUBERNETES_TOKEN_CACHE_TTL_MS: wholeNumber(0, 300_000)
    .default(10_000)
    .describe(
      "How long a token or access review answer is reused (`0`: never), never past the token's expiry.",
    ),
  KUBERNETES_TOKEN_CACHE_SIZE: wholeNumber(1, 1_000_000)
    .default(10_000)
    .describe("Reviews kept at most; the least recently used go first."),
  // The aggregated API (docs/kubernetes.md, "Deliveries in kubectl"): deliveries and rollouts served to
  // the API server's aggregation layer, which authenticates to it with its front-proxy certificate.
  AGGREGATED_API_PORT: wholeNumber(0, 65_535)
    .default(0)
    .describe(
      "HTTPS port of the aggregated API (`deliveries.webhook-operator.io`: `kubectl get deliveries`, `rollouts`, `create deliveryreplay`); `0`: off. Served only with a cluster; it needs `AGGREGATED_API_CERT_FILE` and `AGGREGATED_API_KEY_FILE`. The chart sets `8443` when `aggregatedApi.enabled`.",
    ),
  AGGREGATED_API_CERT_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The aggregated API's serving certificate (PEM; a chain may follow it), the one the APIService's `caBundle` vouches for.",
    ),
  AGGREGATED_API_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("The private key of `AGGREGATED_API_CERT_FILE` (PEM)."),
  // /metrics: who may read it, and how often it is rendered (docs/operating.md, "Who can read /metrics").
  METRICS_TOKEN: z
    .string()
    .min(metricsTokenMinLength, `METRICS_TOKEN must be at least ${metricsTokenMinLength} characters`)
    .optional()
    .describe(
      "A bearer token `/metrics` then requires (`Authorization: Bearer <token>`, compared in constant time), and with it delivery counts per webhook (a `webhook_id` label). Unset: `/metrics` answers anyone who reaches the port and its delivery counts carry no webhook ids. The chart generates one for its ServiceMonitor.",
    ),
  METRICS_TOKEN_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "A file holding the metrics token (a mounted Secret, as the chart does); its surrounding whitespace is ignored. Not together with `METRICS_TOKEN`.",
    ),
  METRICS_CACHE_MS: wholeNumber(0, 60_000)
    .default(2_000)
    .describe(
      "How long one rendering of `/metrics` answers every scrape (`0`: each scrape renders anew). Scrapes that arrive while a rendering runs always share it.",
    ),
});

export type Env = z.input<typeof configSchema>;

export interface Config {
  http: {
    host: string;
    port: number;
    bounds: HttpBounds;
    authFailuresPerMinute: number;
    /** TRUSTED_PROXIES: undefined, none. */
    trustedProxies: { entries: string[]; ranges: BlockList } | undefined;
    apiKeyCacheTtlMs: number;
  };
  logLevel: string;
  logFormat: LogFormat;
  database: {
    url: string | undefined;
    poolSize: number;
    dataDir: string;
    embeddedPort: number;
    timeouts: DatabaseTimeouts;
    migrationStatementTimeoutMs: number;
    readyTimeoutMs: number;
  };
  apiKey: { value: string | undefined; file: string | undefined };
  secretKeys: SecretKeysConfig;
  shutdownTimeoutMs: number;
  dashboard: { enabled: boolean };
  /** Attempts and events older than this many days are removed; 0 keeps everything. */
  retentionDays: number;
  /** The most webhooks one project may have; creating one more through the API is a 409. */
  webhooksPerProjectLimit: number;
  kubernetes: { mode: KubernetesMode; podNamespace: string | undefined } & Omit<
    OperatorConfig,
    "leaseNamespace"
  >;
  /** The aggregated API (kube-api/); port 0: off. Served only when a cluster is configured. */
  aggregatedApi: { port: number; certFile: string | undefined; keyFile: string | undefined };
  /** Kubernetes tokens on /api; `enabled` matters only when a cluster is configured. */
  tokenAuth: { enabled: boolean } & TokenAuthSettings;
  /** False for `workers`: this replica serves the API only and sends just replays and test events. */
  delivery: DeliverySettings & { workers: boolean };
  metrics: { token: string | undefined; cacheMs: number };
  /** The template threads (formats/template.ts). */
  templates: { threads: number; idleMs: number };
  previews: PreviewSettings;
}

export class ConfigError extends Error {}

/** DATABASE_URL, or the URL in DATABASE_URL_FILE (never both), validated alike; its text is never shown. */
function databaseUrlOf(value: string | undefined, file: string | undefined): string | undefined {
  if (file === undefined) return value;
  if (value !== undefined) {
    throw new ConfigError(
      "Invalid configuration:\n  DATABASE_URL_FILE: DATABASE_URL is set too; set only one of them",
    );
  }
  let url: string;
  try {
    url = readDatabaseUrlFile(file);
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  ${(error as Error).message}`);
  }
  if (!databaseUrl.safeParse(url).success) {
    throw new ConfigError(
      `Invalid configuration:\n  DATABASE_URL_FILE: ${file} does not hold a postgres:// or postgresql:// URL`,
    );
  }
  return url;
}

function metricsTokenSettingOf(value: string | undefined, file: string | undefined): string | undefined {
  try {
    return metricsTokenOf(value, file);
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  ${(error as Error).message}`);
  }
}

/** Parses the environment; throws ConfigError naming every bad variable. Blank values count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ""),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const e = parsed.data;
  if (e.DELIVERY_ALLOWED_DESTINATIONS_ONLY && (e.DELIVERY_ALLOWED_DESTINATIONS?.entries.length ?? 0) === 0) {
    throw new ConfigError(
      "Invalid configuration:\n  DELIVERY_ALLOWED_DESTINATIONS_ONLY: true lets deliveries reach only what DELIVERY_ALLOWED_DESTINATIONS names, and it names nothing. Set DELIVERY_ALLOWED_DESTINATIONS (networks and host names, comma-separated) or turn DELIVERY_ALLOWED_DESTINATIONS_ONLY off.",
    );
  }
  if (e.AGGREGATED_API_PORT !== 0 && (!e.AGGREGATED_API_CERT_FILE || !e.AGGREGATED_API_KEY_FILE)) {
    throw new ConfigError(
      `Invalid configuration:\n  AGGREGATED_API_PORT: ${e.AGGREGATED_API_PORT} serves the aggregated API over HTTPS, which needs a serving certificate: set AGGREGATED_API_CERT_FILE and AGGREGATED_API_KEY_FILE (PEM), or AGGREGATED_API_PORT=0 to turn it off.`,
    );
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `Invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: ${e.HTTP_HEADERS_TIMEOUT_MS} is longer than HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS}), which covers the whole request, head included. Lower it or raise HTTP_REQUEST_TIMEOUT_MS.`,
    );
  }
  if (e.DELIVERY_LEASE_MS < longestSendMs(e.DELIVERY_TIMEOUT_MS)) {
    throw new ConfigError(
      `Invalid configuration:\n  DELIVERY_LEASE_MS: ${e.DELIVERY_LEASE_MS} cannot cover a send: with DELIVERY_TIMEOUT_MS=${e.DELIVERY_TIMEOUT_MS} a send (connect, request, response) can take ${longestSendMs(e.DELIVERY_TIMEOUT_MS)} ms, and a lease that ends first lets another replica send the same delivery again. Set DELIVERY_LEASE_MS to at least ${longestSendMs(e.DELIVERY_TIMEOUT_MS)} or lower DELIVERY_TIMEOUT_MS.`,
    );
  }
  return {
    http: {
      host: e.HOST,
      port: e.PORT,
      bounds: {
        maxConnections: e.HTTP_MAX_CONNECTIONS,
        headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
        requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
        keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      },
      authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
      trustedProxies: e.TRUSTED_PROXIES,
      apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    },
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    database: {
      url: databaseUrlOf(e.DATABASE_URL, e.DATABASE_URL_FILE),
      poolSize: e.DATABASE_POOL_SIZE,
      dataDir: e.DATA_DIR,
      embeddedPort: e.EMBEDDED_POSTGRES_PORT,
      timeouts: {
        connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
        lockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
        idleInTransactionTimeoutMs: e.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
        keepAliveIdleMs: e.DATABASE_KEEPALIVE_IDLE_MS,
      },
      migrationStatementTimeoutMs: e.DATABASE_MIGRATION_STATEMENT_TIMEOUT_MS,
      readyTimeoutMs: e.DATABASE_READY_TIMEOUT_MS,
    },
    apiKey: { value: e.API_KEY, file: e.API_KEY_FILE },
    secretKeys: { value: e.SECRET_ENCRYPTION_KEYS, file: e.SECRET_ENCRYPTION_KEYS_FILE, dataDir: e.DATA_DIR },
    // By default long enough for the sends in flight to finish (or time out) and be recorded, so a
    // rolling update does not hand them back to the queue to be sent twice.
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS ?? longestSendMs(e.DELIVERY_TIMEOUT_MS) + 5_000,
    dashboard: { enabled: e.DASHBOARD_ENABLED },
    retentionDays: e.RETENTION_DAYS,
    webhooksPerProjectLimit: e.WEBHOOKS_PER_PROJECT_LIMIT,
    kubernetes: {
      mode: e.KUBERNETES,
      podNamespace: e.POD_NAMESPACE,
      namespaceSelector: e.NAMESPACE_SELECTOR,
      leaseName: e.LEADER_ELECTION_LEASE_NAME,
      identity: e.POD_NAME,
      leaseDurationMs: e.LEADER_ELECTION_LEASE_DURATION_MS,
      leaderRetryPeriodMs: e.LEADER_ELECTION_RETRY_PERIOD_MS,
      relistIntervalMs: e.INFORMER_RELIST_INTERVAL_MS,
      webhookResyncIntervalMs: e.WEBHOOK_STATUS_RESYNC_INTERVAL_MS,
      workloadKinds: e.WATCH_WORKLOAD_KINDS,
      secretsWithoutLabel: e.WEBHOOK_SECRETS_WITHOUT_LABEL,
      diagnosis: {
        failFast: e.ROLLOUT_FAIL_FAST,
        failFastAfterSeconds: e.ROLLOUT_FAIL_FAST_AFTER_SECONDS,
        logLines: e.ROLLOUT_LOG_LINES,
        redactWords: e.ROLLOUT_REDACT_WORDS,
      },
      rolloutLinks: e.ROLLOUT_LINKS,
    },
    aggregatedApi: {
      port: e.AGGREGATED_API_PORT,
      certFile: e.AGGREGATED_API_CERT_FILE,
      keyFile: e.AGGREGATED_API_KEY_FILE,
    },
    tokenAuth: {
      enabled: e.KUBERNETES_TOKEN_AUTH,
      audience: e.KUBERNETES_TOKEN_AUDIENCE,
      cacheTtlMs: e.KUBERNETES_TOKEN_CACHE_TTL_MS,
      cacheSize: e.KUBERNETES_TOKEN_CACHE_SIZE,
    },
    delivery: {
      workers: e.DELIVERY_WORKERS,
      concurrency: e.DELIVERY_CONCURRENCY,
      perWebhookConcurrency: e.DELIVERY_PER_WEBHOOK_CONCURRENCY,
      timeoutMs: e.DELIVERY_TIMEOUT_MS,
      leaseMs: e.DELIVERY_LEASE_MS,
      pollIntervalMs: e.DELIVERY_POLL_INTERVAL_MS,
      responseBodyLimitBytes: e.DELIVERY_RESPONSE_BODY_LIMIT_BYTES,
      retryDelaysMs: e.DELIVERY_RETRY_DELAYS_MS,
      retryAfterMaxMs: e.DELIVERY_RETRY_AFTER_MAX_SECONDS * 1000,
      allowPrivateNetworks: e.DELIVERY_ALLOW_PRIVATE_NETWORKS,
      allowedDestinations: e.DELIVERY_ALLOWED_DESTINATIONS,
      allowedDestinationsOnly: e.DELIVERY_ALLOWED_DESTINATIONS_ONLY,
      synchronousSends: {
        perProjectConcurrency: e.SYNC_SENDS_PER_PROJECT_CONCURRENCY,
        perProjectPerMinute: e.SYNC_SENDS_PER_PROJECT_PER_MINUTE,
        perProjectPerDay: e.SYNC_SENDS_PER_PROJECT_PER_DAY,
      },
    },
    templates: { threads: e.TEMPLATE_THREADS, idleMs: e.TEMPLATE_THREAD_IDLE_MS },
    previews: {
      perProjectConcurrency: e.PREVIEWS_PER_PROJECT_CONCURRENCY,
      perProjectPerMinute: e.PREVIEWS_PER_PROJECT_PER_MINUTE,
    },
    metrics: {
      token: metricsTokenSettingOf(e.METRICS_TOKEN, e.METRICS_TOKEN_FILE),
      cacheMs: e.METRICS_CACHE_MS,
    },
  };
}

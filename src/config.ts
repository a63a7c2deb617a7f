import { z } from "zod";
import { type AllowList, parseAllowList } from "./delivery-engine/destination-policy.js";
import type { TokenAuthSettings } from "./kube-auth/reviewer.js";
import type { OperatorConfig } from "./operator/operator.js";
import type { SecretKeysConfig } from "./secrets/keys.js";

// Every setting the process reads, parsed once at start-up. Each service receives only the part it
// needs. Names are the environment variables documented in the README's configuration reference.
const booleanFromEnv = z
  .enum(["true", "false", "1", "0", "yes", "no"])
  .transform((value) => value === "true" || value === "1" || value === "yes");

/** Digits only: "1e3", "0x1F" or "8080abc" are mistakes worth reporting, not numbers to guess at. */
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min).max(max));

const configSchema = z.object({
  HOST: z.string().min(1).default("0.0.0.0"),
  PORT: wholeNumber(0, 65_535).default(8080),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_SIZE: wholeNumber(1, 200).default(10),
  DATA_DIR: z.string().min(1).default(".data"),
  EMBEDDED_POSTGRES_PORT: wholeNumber(1, 65_535).default(5433),
  API_KEY: z.string().min(16, "API_KEY must be at least 16 characters").optional(),
  API_KEY_FILE: z.string().min(1).optional(),
  SECRET_ENCRYPTION_KEYS: z.string().min(1).optional(),
  SECRET_ENCRYPTION_KEYS_FILE: z.string().min(1).optional(),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(0).optional(),
  DELIVERY_CONCURRENCY: wholeNumber(1, 1_000).default(64),
  DELIVERY_PER_WEBHOOK_CONCURRENCY: wholeNumber(1, 1_000).default(16),
  DELIVERY_WORKERS: booleanFromEnv.default(true),
  DELIVERY_TIMEOUT_MS: wholeNumber(1).default(30_000),
  DELIVERY_LEASE_MS: wholeNumber(1_000).default(60_000),
  DELIVERY_POLL_INTERVAL_MS: wholeNumber(10).default(2_000),
  DELIVERY_RESPONSE_BODY_LIMIT_BYTES: wholeNumber(0, 1_048_576).default(4_096),
  DELIVERY_ALLOW_PRIVATE_NETWORKS: booleanFromEnv.default(true),
  // The waits before retries 1–5 of a webhook with a retry policy (before attempts 2–6).
  DELIVERY_RETRY_DELAYS_MS: z
    .string()
    .default("5000,60000,300000,1800000,7200000")
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
    }),
  DASHBOARD_ENABLED: booleanFromEnv.default(true),
  RETENTION_DAYS: wholeNumber(0, 36_500).default(30),
  DELIVERY_ALLOWED_DESTINATIONS: z
    .string()
    .transform((value, ctx) => {
      const entries = value
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== "");
      try {
        return { entries, list: parseAllowList(entries) };
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: `${(error as Error).message}; write a comma-separated list such as "10.96.0.0/12,.svc.cluster.local"`,
        });
        return z.NEVER;
      }
    })
    .optional(),
  KUBERNETES: z.enum(["auto", "true", "false"]).default("auto"),
  NAMESPACE_SELECTOR: z.string().default(""),
  POD_NAMESPACE: z.string().min(1).optional(),
  POD_NAME: z.string().min(1).optional(),
  LEADER_ELECTION_LEASE_NAME: z.string().min(1).default("webhook-operator-leader"),
  LEADER_ELECTION_LEASE_DURATION_MS: wholeNumber(1_000).default(15_000),
  LEADER_ELECTION_RETRY_PERIOD_MS: wholeNumber(100).default(2_000),
  INFORMER_RELIST_INTERVAL_MS: wholeNumber(1_000).default(300_000),
  WEBHOOK_STATUS_RESYNC_INTERVAL_MS: wholeNumber(1_000).default(60_000),
  KUBERNETES_TOKEN_AUTH: booleanFromEnv.default(true),
  KUBERNETES_TOKEN_AUDIENCE: z.string().trim().min(1).default("webhook-operator"),
  KUBERNETES_TOKEN_CACHE_TTL_MS: wholeNumber(0, 300_000).default(10_000),
  KUBERNETES_TOKEN_CACHE_SIZE: wholeNumber(1, 1_000_000).default(10_000),
});

export type Env = z.input<typeof configSchema>;

export interface Config {
  http: { host: string; port: number };
  logLevel: string;
  database: { url: string | undefined; poolSize: number; dataDir: string; embeddedPort: number };
  apiKey: { value: string | undefined; file: string | undefined };
  secretKeys: SecretKeysConfig;
  shutdownTimeoutMs: number;
  dashboard: { enabled: boolean };
  /** Attempts and events older than this many days are removed; 0 keeps everything. */
  retentionDays: number;
  kubernetes: { mode: KubernetesMode; podNamespace: string | undefined } & Omit<
    OperatorConfig,
    "leaseNamespace"
  >;
  /** Kubernetes tokens on /api; `enabled` matters only when a cluster is configured. */
  tokenAuth: { enabled: boolean } & TokenAuthSettings;
  delivery: {
    /** False: this replica serves the API only and sends just replays and test events. */
    workers: boolean;
    concurrency: number;
    perWebhookConcurrency: number;
    timeoutMs: number;
    leaseMs: number;
    pollIntervalMs: number;
    responseBodyLimitBytes: number;
    /** The waits before automatic retries 1–5 (webhooks with a retry policy), ±20 % jitter. */
    retryDelaysMs: number[];
    allowPrivateNetworks: boolean;
    /** Private destinations the admin allows even when allowPrivateNetworks is false. */
    allowedDestinations: { entries: string[]; list: AllowList } | undefined;
  };
}

export class ConfigError extends Error {}

/**
 * How long connecting to a receiver may take: undici's 10 s, or the whole timeout when that is shorter.
 * A send can therefore last up to connect + DELIVERY_TIMEOUT_MS + ~1 s (undici's timers tick every
 * half second): its lease must cover that, or another replica would send it again while it runs.
 */
export const deliveryConnectTimeoutMs = (timeoutMs: number) => Math.min(10_000, timeoutMs);
export const longestSendMs = (timeoutMs: number) => timeoutMs + deliveryConnectTimeoutMs(timeoutMs) + 1_000;

/** auto: in a cluster (service account) or with a kubeconfig; false: API and workers only. */
export type KubernetesMode = "auto" | "true" | "false";

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
  if (e.DELIVERY_LEASE_MS < longestSendMs(e.DELIVERY_TIMEOUT_MS)) {
    throw new ConfigError(
      `Invalid configuration:\n  DELIVERY_LEASE_MS: ${e.DELIVERY_LEASE_MS} cannot cover a send: with DELIVERY_TIMEOUT_MS=${e.DELIVERY_TIMEOUT_MS} a send (connect, request, response) can take ${longestSendMs(e.DELIVERY_TIMEOUT_MS)} ms, and a lease that ends first lets another replica send the same delivery again. Set DELIVERY_LEASE_MS to at least ${longestSendMs(e.DELIVERY_TIMEOUT_MS)} or lower DELIVERY_TIMEOUT_MS.`,
    );
  }
  return {
    http: { host: e.HOST, port: e.PORT },
    logLevel: e.LOG_LEVEL,
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      dataDir: e.DATA_DIR,
      embeddedPort: e.EMBEDDED_POSTGRES_PORT,
    },
    apiKey: { value: e.API_KEY, file: e.API_KEY_FILE },
    secretKeys: { value: e.SECRET_ENCRYPTION_KEYS, file: e.SECRET_ENCRYPTION_KEYS_FILE, dataDir: e.DATA_DIR },
    // By default long enough for the sends in flight to finish (or time out) and be recorded, so a
    // rolling update does not hand them back to the queue to be sent twice.
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS ?? longestSendMs(e.DELIVERY_TIMEOUT_MS) + 5_000,
    dashboard: { enabled: e.DASHBOARD_ENABLED },
    retentionDays: e.RETENTION_DAYS,
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
      allowPrivateNetworks: e.DELIVERY_ALLOW_PRIVATE_NETWORKS,
      allowedDestinations: e.DELIVERY_ALLOWED_DESTINATIONS,
    },
  };
}

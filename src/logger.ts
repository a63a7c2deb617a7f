import { createRequire } from "node:module";
import { pino } from "pino";
import type pretty from "pino-pretty";

// pino-pretty (and the 30 modules it loads, about 4 MiB resident) only for a person at a terminal: a
// replica logging JSON never loads it. It is CommonJS, so required where needed, synchronously.
const loadPretty = (): typeof pretty => createRequire(import.meta.url)("pino-pretty");

export type Logger = pino.Logger;

/** LOG_FORMAT: `auto` is `pretty` when stdout is a terminal, else `json`. */
export type LogFormat = "auto" | "pretty" | "json";

// Secrets never reach the log: request headers carrying keys and any field named like a secret are
// censored wherever they appear in a logged object.
const redactPaths = [
  "req.headers.authorization",
  "headers.authorization",
  "*.secret",
  "secret",
  "apiKey",
  "*.apiKey",
  "key",
];

/**
 * JSON lines for log collectors (pino's own fast path), or, for a person at a terminal, one readable
 * line per record (its fields indented below it). Redaction happens before either.
 */
export function createLogger(level: string, format: LogFormat = "json"): Logger {
  const options = {
    level,
    redact: { paths: redactPaths, censor: "[redacted]" },
    base: { app: "webhook-operator" },
  };
  if (format === "json" || (format === "auto" && !process.stdout.isTTY)) return pino(options);
  // In this thread and synchronous: a terminal needs no worker, and no line is lost when the process exits.
  return pino(
    options,
    loadPretty()({ sync: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,app" }),
  );
}

/**
 * A retry's log line: the error's message (and HTTP status or code, when it has one), without the
 * stack. Retries repeat for as long as an outage lasts; a stack per attempt says nothing new, so it is
 * logged at debug level only (`logRetry`).
 */
export function describeError(error: unknown): { error: string; code?: string | number } {
  if (!(error instanceof Error)) return { error: String(error) };
  const code = (error as { code?: string | number }).code;
  return {
    error: statusMessage(error) ?? error.message.split("\n")[0] ?? "",
    ...(code !== undefined ? { code } : {}),
  };
}

/**
 * The API server's own sentence for a failed Kubernetes call ("leases … is forbidden: User … cannot
 * get …"): client-node's ApiException carries the Status object as its body, and the whole response
 * (headers included) in a many-line message.
 */
function statusMessage(error: Error): string | undefined {
  const { body, code } = error as { body?: unknown; code?: unknown };
  let status: unknown = body;
  if (typeof body === "string") {
    try {
      status = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const message = (status as { message?: unknown } | undefined)?.message;
  return typeof message === "string" && message !== "" ? `HTTP ${code}: ${message}` : undefined;
}

export function logRetry(
  logger: Logger,
  error: unknown,
  fields: Record<string, unknown>,
  message: string,
): void {
  logger.warn({ ...describeError(error), ...fields }, message);
  logger.debug({ err: error, ...fields }, message);
}

import { pino } from "pino";

export type Logger = pino.Logger;

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

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: redactPaths, censor: "[redacted]" },
    base: { app: "webhook-operator" },
  });
}

/**
 * A retry's log line: the error's message (and HTTP status or code, when it has one), without the
 * stack. Retries repeat for as long as an outage lasts; a stack per attempt says nothing new, so it is
 * logged at debug level only (`logRetry`).
 */
export function describeError(error: unknown): { error: string; code?: string | number } {
  if (!(error instanceof Error)) return { error: String(error) };
  const code = (error as { code?: string | number }).code;
  // client-node's ApiException puts the whole response in its message; the first line says it.
  return { error: error.message.split("\n")[0] ?? "", ...(code !== undefined ? { code } : {}) };
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

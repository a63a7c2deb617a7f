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

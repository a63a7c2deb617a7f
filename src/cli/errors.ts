import { type Command, CommanderError } from "commander";
import { ApiClientError, ApiNetworkError } from "../client/errors.js";
import { terminalSafe } from "./terminal-text.js";

// Exit codes of the command-line client.
export const exitCodes = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * A mistake in how the command was called, found after parsing (no API key, nothing to update):
 * reported like commander's own usage errors, with the command's help, and exit code 2.
 */
export function usageError(command: Command, message: string): never {
  command.error(`error: ${message}`, { exitCode: exitCodes.usage, code: "webhook-operator.usage" });
}

/** The API call worked but the delivery it made (retry, test event) failed; the result is already printed. */
export class DeliveryFailedError extends Error {
  constructor(readonly errorMessage: string | null) {
    super(`the delivery failed${errorMessage ? `: ${errorMessage}` : ""}`);
    this.name = "DeliveryFailedError";
  }
}

/** The preview was answered, but the webhook's format cannot render the event; the answer is printed. */
export class PreviewFailedError extends Error {
  constructor(readonly reason: string) {
    super(`the webhook's format cannot render this event: ${reason}`);
    this.name = "PreviewFailedError";
  }
}

/** Prints what went wrong as one or two lines (never a stack trace) and returns the exit code. */
export function reportError(error: unknown): number {
  // commander has printed its message (and the usage) already; help and --version exit 0.
  if (error instanceof CommanderError) return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
  const lines: string[] = [];
  if (error instanceof ApiClientError) {
    lines.push(`error: ${error.message} (HTTP ${error.status}, ${error.code})`);
    if (error.status === 401) lines.push("Check --api-key or WEBHOOK_OPERATOR_API_KEY.");
  } else if (error instanceof ApiNetworkError) {
    lines.push(`error: ${error.message}`);
    lines.push("Is the service running there? Set the address with --api-url or WEBHOOK_OPERATOR_URL.");
  } else if (error instanceof DeliveryFailedError || error instanceof PreviewFailedError) {
    lines.push(`error: ${error.message}`);
  } else {
    lines.push(`error: unexpected failure: ${error instanceof Error ? error.message : String(error)}`);
  }
  // The server's message and a delivery's error_message can carry a receiver's or tenant's text.
  process.stderr.write(`${lines.map((line) => terminalSafe(line)).join("\n")}\n`);
  return exitCodes.failure;
}

import { type Command, InvalidArgumentError, Option } from "commander";
import { ApiClient } from "../../client/api-client.js";
import { eventTypeNames } from "../../event-types.js";
import { version } from "../../version.js";
import { usageError } from "../errors.js";

export const defaultApiUrl = "http://127.0.0.1:8080";

/** Options of the `webhooks` group, read by every subcommand (commander's optsWithGlobals). */
export interface GroupOptions {
  apiUrl?: string;
  apiKey?: string;
  json?: boolean;
}

const environmentHelp = `
Environment:
  WEBHOOK_OPERATOR_URL      address of the service, like --api-url (default: ${defaultApiUrl})
  WEBHOOK_OPERATOR_API_KEY  API key or Kubernetes token, like --api-key (keeps it out of shell history)
  WEBHOOK_SECRET            signing secret for 'create' when neither --secret nor --secret-stdin is given

Exit codes: 0 success, 1 API, network or delivery failure, 2 usage error.`;

export function addGroupOptions(group: Command): Command {
  return group
    .addHelpText("after", environmentHelp)
    .addOption(
      new Option("--api-url <url>", `address of the service (default: ${defaultApiUrl})`).env(
        "WEBHOOK_OPERATOR_URL",
      ),
    )
    .addOption(
      new Option(
        "--api-key <key>",
        "API key, or a Kubernetes token (kubectl create token <sa> --audience webhook-operator), sent as a Bearer token",
      ).env("WEBHOOK_OPERATOR_API_KEY"),
    )
    .option("--json", "print the API's JSON instead of tables, for scripts");
}

export interface Connection {
  client: ApiClient;
  json: boolean;
}

/** The API client for a subcommand; a missing key or a malformed address is a usage error (exit 2). */
export function connect(command: Command): Connection {
  const { apiUrl, apiKey, json } = command.optsWithGlobals<GroupOptions>();
  // A variable set to "" counts as unset, as in the service's own configuration.
  const baseUrl = apiUrl?.trim() || defaultApiUrl;
  if (!isHttpUrl(baseUrl)) {
    usageError(
      command,
      `--api-url (or WEBHOOK_OPERATOR_URL) must be an http:// or https:// URL, not '${baseUrl}'`,
    );
  }
  if (!apiKey?.trim()) {
    usageError(command, "no API key: pass --api-key <key> or set WEBHOOK_OPERATOR_API_KEY");
  }
  const client = new ApiClient({
    baseUrl,
    apiKey: apiKey.trim(),
    userAgent: `webhook-operator-cli/${version}`,
  });
  return { client, json: json === true };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || !Number.isSafeInteger(number)) {
    throw new InvalidArgumentError("It must be a positive integer.");
  }
  return number;
}

const durationUnits: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

const isoDateTime = /^(\d{4})-(\d\d)-(\d\d)T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|([+-])(\d\d):(\d\d))$/i;

/**
 * A point in time as `--since` and `--until` take it: a duration back from now (30m, 2h, 7d) or an
 * ISO 8601 date-time with its zone (Z or ±hh:mm), as the API takes it. Returned as ISO text in UTC.
 * A date that does not exist (2026-02-30) is refused: JavaScript would read it as 2 March.
 */
export function pointInTime(value: string): string {
  const duration = /^(\d+)([mhd])$/.exec(value);
  if (duration) {
    return new Date(
      Date.now() - Number(duration[1]) * (durationUnits[duration[2] as string] as number),
    ).toISOString();
  }
  const parts = isoDateTime.exec(value);
  const at = new Date(value);
  if (parts && !Number.isNaN(at.getTime())) {
    const [, year, month, day, , , , sign, hours, minutes] = parts;
    const offsetMs = sign ? (sign === "-" ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000 : 0;
    const local = new Date(at.getTime() + offsetMs);
    if (
      local.getUTCFullYear() === Number(year) &&
      local.getUTCMonth() + 1 === Number(month) &&
      local.getUTCDate() === Number(day)
    ) {
      return at.toISOString();
    }
  }
  throw new InvalidArgumentError(
    "It must be a duration back from now (30m, 2h, 7d) or an ISO 8601 date-time with its zone (2026-11-22T10:00:00Z).",
  );
}

export function trueOrFalse(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError("It must be 'true' or 'false'.");
}

/** `all` is every event name this client knows; anything else is sent as listed for the server to check. */
export function eventList(value: string): string[] {
  if (value.trim() === "all") return [...eventTypeNames];
  return value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

export interface WebhookRef {
  projectId: number;
  webhookId: number;
}

export interface DeliveryRef extends WebhookRef {
  deliveryId: number;
}

const idOption = (flags: string, description: string) =>
  new Option(flags, description).argParser(positiveInteger).makeOptionMandatory();

export const projectIdOption = () => idOption("--project-id <id>", "project id");
export const webhookIdOption = () => idOption("--webhook-id <id>", "webhook id");
export const deliveryIdOption = () => idOption("--delivery-id <id>", "delivery id");

export const eventsOption = (description: string) =>
  new Option("--events <names>", `${description}: comma-separated event names, or 'all'`).argParser(
    eventList,
  );

export const enabledOption = (description: string) =>
  new Option("--enabled <true|false>", description).argParser(trueOrFalse);

// `off` stays the string "off": commander turns a parser's null into "".

/** `off` turns retries off; otherwise the number of attempts in all, which the API checks. */
export function retryMaxAttempts(value: string): number | "off" {
  if (value === "off") return "off";
  return positiveIntegerOr(value, "It must be a number of attempts (1-6) or 'off'.");
}

/** `<failures>:<seconds>` (e.g. 10:3600), or `off`. */
export function autoDisable(value: string): { after_failures: number; min_duration_seconds: number } | "off" {
  if (value === "off") return "off";
  const match = /^(\d+):(\d+)$/.exec(value);
  if (!match) throw new InvalidArgumentError("It must be <failures>:<seconds>, such as 10:3600, or 'off'.");
  return { after_failures: Number(match[1]), min_duration_seconds: Number(match[2]) };
}

/** `<per_second>:<burst>` (e.g. 5:20 or 0.5:1), or `off`; the API checks the ranges. */
export function rateLimit(value: string): { per_second: number; burst: number } | "off" {
  if (value === "off") return "off";
  const match = /^(\d+(?:\.\d+)?):(\d+)$/.exec(value);
  if (!match) throw new InvalidArgumentError("It must be <per_second>:<burst>, such as 5:20, or 'off'.");
  return { per_second: Number(match[1]), burst: Number(match[2]) };
}

function positiveIntegerOr(value: string, message: string): number {
  try {
    return positiveInteger(value);
  } catch {
    throw new InvalidArgumentError(message);
  }
}

export const policyOptions = (command: Command): Command =>
  command
    .addOption(
      new Option(
        "--retry-max-attempts <n|off>",
        "opt-in automatic retries: up to n attempts of an event in all (1-6), or off",
      ).argParser(retryMaxAttempts),
    )
    .addOption(
      new Option(
        "--auto-disable <failures:seconds|off>",
        "opt-in: disable the webhook after that many failed deliveries in a row over at least that long, or off",
      ).argParser(autoDisable),
    )
    .addOption(
      new Option(
        "--rate-limit <per_second:burst|off>",
        "opt-in: at most burst deliveries at once, then per_second a second, across all replicas, or off",
      ).argParser(rateLimit),
    );

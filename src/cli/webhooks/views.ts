import type {
  Delivery,
  EventTypeDescriptor,
  FilterCheck,
  RecoverResult,
  RetryResult,
  TestEventResult,
  Webhook,
  WebhookPreview,
} from "../../client/api-client.js";
import { eventTypeNames } from "../../event-types.js";
import { terminalSafe } from "../terminal-text.js";
import { filtersLine } from "./filter-options.js";
import { cell, formatBlock, formatFields, formatTable } from "./output.js";

// How each resource reads in a terminal. Keys are the API's field names, so the text output, --json
// and the spec use one vocabulary.

/** In a table a full subscription reads as `all`; `show` lists every name. */
function subscribedEvents(events: string[]): string {
  const everything = eventTypeNames.every((name) => events.includes(name));
  return everything ? `all (${events.length})` : cell(events);
}

/** `false (auto)` when the service disabled the webhook itself (auto_disable); `show` has the reason. */
const enabledCell = (w: Webhook) => (w.disabled_reason !== null ? "false (auto)" : cell(w.enabled));

const retryPolicyText = (w: Webhook) =>
  w.retry_policy === null ? null : `up to ${w.retry_policy.max_attempts} attempts`;

const autoDisableText = (w: Webhook) =>
  w.auto_disable === null
    ? null
    : `after ${w.auto_disable.after_failures} failures in a row over at least ${w.auto_disable.min_duration_seconds} s`;

export function webhookTable(webhooks: Webhook[]): string {
  if (webhooks.length === 0) return "No webhooks.\n";
  return formatTable(
    ["ID", "URL", "EVENTS", "FORMAT", "ENABLED", "HAS_SECRET", "RETRIES", "UPDATED_AT"],
    webhooks.map((w) => [
      cell(w.id),
      w.url,
      subscribedEvents(w.events),
      w.format,
      enabledCell(w),
      cell(w.has_secret),
      cell(w.retry_policy?.max_attempts),
      w.updated_at,
    ]),
  );
}

/** "1 line", "3 lines": a final line feed ends the last line, it does not start another. */
export function linesText(text: string): string {
  const count = text.replace(/\r?\n$/, "").split("\n").length;
  return `${count} ${count === 1 ? "line" : "lines"}`;
}

/**
 * The format fields that differ from the default, in short labels so the key column keeps its width: a
 * webhook that chose none prints as it always did. --json has every field.
 */
function formatLines(w: Webhook): [string, unknown][] {
  const format =
    w.format === "cloudevents"
      ? `cloudevents, ${w.cloudevents_mode} mode`
      : w.format === "template"
        ? `template, ${w.template_content_type}`
        : w.format;
  const lines: [string, unknown][] = [
    ["format", w.format === "envelope" ? null : format],
    // A template is many lines: its size here, its text with --json.
    ["template", w.template === null ? null : `${linesText(w.template)}; see --json`],
    ["signature", w.signature_scheme === "hmac-sha256" ? null : w.signature_scheme],
    ["headers", w.header_names.length === 0 ? null : w.header_names],
  ];
  return lines.filter(([, value]) => value !== null);
}

/** The rate limit and a receiver's pause, only when set: a webhook without them prints as it did. */
function paceLines(w: Webhook): [string, unknown][] {
  const lines: [string, unknown][] = [
    ["rate_limit", w.rate_limit && `${w.rate_limit.per_second}/s, burst ${w.rate_limit.burst}`],
    ["throttled_until", w.throttled_until],
  ];
  return lines.filter(([, value]) => value !== null);
}

export function webhookFields(webhook: Webhook): string {
  const { managed_by: managedBy, retry_policy: _retry, auto_disable: _auto, ...fields } = webhook;
  const owner = managedBy ? `${managedBy.kind} ${managedBy.namespace}/${managedBy.name}` : null;
  const { disabled_reason: reason, disabled_at: at, ...spec } = fields;
  const {
    format: _format,
    cloudevents_mode: _mode,
    template: _template,
    template_content_type: _contentType,
    signature_scheme: _signature,
    header_names: _headers,
    filters: _filters,
    rate_limit: _rateLimit,
    throttled_until: _throttledUntil,
    ...rest
  } = spec;
  return formatFields([
    ...Object.entries(rest),
    ...formatLines(webhook),
    ...(webhook.filters ? [["filters", filtersLine(webhook.filters)] as [string, unknown]] : []),
    ["managed_by", owner],
    ["retry_policy", retryPolicyText(webhook)],
    ["auto_disable", autoDisableText(webhook)],
    ["disabled_reason", reason],
    ["disabled_at", at],
    ...paceLines(webhook),
  ]);
}

export function eventTypeTable(types: EventTypeDescriptor[]): string {
  return formatTable(
    ["EVENT_TYPE", "CATEGORY", "DESCRIPTION"],
    types.map((type) => [type.event_type, type.category, type.description]),
  );
}

/** First line of an error, cut to fit a table; `deliveries show` has the whole text. */
function shortError(message: string | null): string {
  const first = (message ?? "-").split("\n", 1)[0] ?? "";
  return first.length > 60 ? `${first.slice(0, 59)}…` : first;
}

export function deliveryTable(deliveries: Delivery[]): string {
  if (deliveries.length === 0) return "No deliveries.\n";
  return formatTable(
    ["ID", "EVENT_TYPE", "ATTEMPT", "SUCCESS", "STATUS_CODE", "DELIVERED_AT", "ERROR"],
    deliveries.map((d) => [
      cell(d.id),
      d.event_type,
      cell(d.attempt_number),
      cell(d.success),
      cell(d.status_code),
      d.delivered_at,
      shortError(d.error_message),
    ]),
  );
}

/** The delivery's fields, then the receiver's answer and the envelope as sent (pretty-printed). */
export function deliveryDetails(delivery: Delivery): string {
  const { payload, response_body: responseBody, request_headers: requestHeaders, ...fields } = delivery;
  let envelope: string;
  try {
    envelope = JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    envelope = payload;
  }
  const answer = responseBody.trimEnd() === "" ? "(empty)" : responseBody.trimEnd();
  // One line per header: a line feed inside a name or value shows as \n rather than as a forged header.
  const sent = requestHeaders
    ? Object.entries(requestHeaders)
        .map(([name, value]) => terminalSafe(`${name}: ${value}`))
        .join("\n")
    : "(not recorded: no request was sent, or the attempt predates this version)";
  return [
    formatFields(Object.entries(fields)),
    formatBlock("request_headers", sent),
    formatBlock("response_body", answer),
    formatBlock("payload", envelope),
  ].join("\n");
}

export function recoverSummary(result: RecoverResult): string {
  const what = result.event_type === null ? "" : ` ${result.event_type}`;
  const more = result.queued === result.limit ? ` (the most one call queues; run it again for the rest)` : "";
  const text = `queued ${result.queued}${what} ${result.queued === 1 ? "event" : "events"} failed between ${result.since} and ${result.until}${more}`;
  return `${terminalSafe(text)}\n`;
}

export function attemptFields(result: RetryResult | TestEventResult): string {
  return formatFields(Object.entries(result));
}

/** A preview: the request's headers in send order, then its body exactly as it would be sent. */
export function previewDetails(preview: WebhookPreview): string {
  const fields = formatFields([
    ["event_type", preview.event_type],
    ["content_type", preview.content_type],
    ...(preview.error === undefined ? [] : [["error", preview.error] as [string, unknown]]),
  ]);
  if (preview.body === null) return fields;
  const headers = Object.entries(preview.headers)
    .map(([name, value]) => terminalSafe(`${name}: ${value}`))
    .join("\n");
  return [fields, formatBlock("request_headers", headers), formatBlock("body", preview.body)].join("\n");
}

/** Whether the webhook would get the example workload's event; each reason on a line of its own. */
export function filterCheckFields(check: FilterCheck): string {
  return formatFields([
    ["would_deliver", check.would_deliver],
    ...(check.reasons.length === 0 ? [] : [["reasons", check.reasons.join("\n")] as [string, unknown]]),
  ]);
}

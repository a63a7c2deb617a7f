import type { Envelope } from "./envelope.js";
import { linkableUrl, multiLine, oneLine } from "./text-limits.js";

/**
 * The facts every chat card shows, read once from the event so the four chat formats differ only in
 * shape: what rolled out (project and deployment id), where (environment), which commit (short sha and
 * the message's first line), the status with its colour, the link, the error of a failed rollout and
 * the times. Text here is cleaned of control characters but neither cut nor escaped: each service has
 * its own limits and markup, applied by its renderer.
 */
export interface DeploymentCard {
  eventType: string;
  eventId: string;
  /** Fixed words per event type ("Rollout succeeded"), no user text. */
  headline: string;
  status: string;
  tone: Tone;
  project: string | null;
  deploymentId: string | null;
  environment: string | null;
  branch: string | null;
  commitSha: string | null;
  commitSubject: string | null;
  /** An absolute http(s) URL, or null when the payload has none or one that must not be linked. */
  url: string | null;
  errorMessage: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  duration: string | null;
}

/** What a status means to a reader, mapped by each service to its own colours or styles. */
export type Tone = "good" | "bad" | "progress" | "info" | "neutral";

const statusTone: Record<string, Tone> = {
  succeeded: "good",
  failed: "bad",
  pending: "progress",
  ready: "info",
  cancelled: "neutral",
};

/** One colour per tone, for the services that take a hex colour (Slack, Discord, Google Chat). */
export const toneColour: Record<Tone, string> = {
  good: "#2EB67D",
  bad: "#E01E5A",
  progress: "#ECB22E",
  info: "#1D9BD1",
  neutral: "#8D8D8D",
};

const headlines: Record<string, string> = {
  "deployment.created": "Rollout started",
  "deployment.ready": "Rollout ready",
  "deployment.succeeded": "Rollout succeeded",
  "deployment.failed": "Rollout failed",
  "deployment.cancelled": "Rollout cancelled",
};

/** URLs longer than this are not linked: Slack's button takes up to 3000 characters, the lowest bound. */
export const maxLinkLength = 3000;

export function deploymentCard(envelope: Envelope): DeploymentCard {
  const payload = envelope.payload as Record<string, unknown>;
  const status = text(payload.status) ?? "unknown";
  const startedAt = text(payload.started_at);
  const finishedAt = text(payload.finished_at);
  const message = text(payload.commit_message, multiLine);
  return {
    eventType: envelope.event_type,
    eventId: envelope.id,
    headline: headlines[envelope.event_type] ?? oneLine(envelope.event_type),
    status,
    tone: statusTone[status] ?? "neutral",
    project: text(payload.project_name),
    deploymentId: typeof payload.deployment_id === "number" ? String(payload.deployment_id) : null,
    environment: text(payload.environment),
    branch: text(payload.branch),
    commitSha: text(payload.commit_sha)?.slice(0, 7) ?? null,
    commitSubject: message === null ? null : (message.split("\n")[0] as string).trim() || null,
    url: linkableUrl(typeof payload.url === "string" ? payload.url : null, maxLinkLength),
    errorMessage: text(payload.error_message, multiLine),
    startedAt: readableTime(startedAt),
    finishedAt: readableTime(finishedAt),
    duration: durationBetween(startedAt, finishedAt),
  };
}

/**
 * More than any card shows (its longest text is cut at 2000 characters): the rest of a long value is
 * never read, so a commit message of megabytes costs no more to render than one of a page.
 */
const maxRead = 4096;

function text(value: unknown, clean: (text: string) => string = oneLine): string | null {
  if (typeof value !== "string") return null;
  if (value.length <= maxRead) return clean(value) || null;
  const high = value.charCodeAt(maxRead - 1) >= 0xd800 && value.charCodeAt(maxRead - 1) <= 0xdbff;
  return `${clean(value.slice(0, high ? maxRead - 1 : maxRead))}…`; // never half a surrogate pair
}

/** "2026-11-27 14:03:05 UTC": the same for every reader, whatever the service's locale. */
function readableTime(iso: string | null): string | null {
  const ms = iso === null ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(ms)) return null;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

function durationBetween(startIso: string | null, endIso: string | null): string | null {
  if (startIso === null || endIso === null) return null;
  const seconds = Math.round((Date.parse(endIso) - Date.parse(startIso)) / 1000);
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${m}m`;
  return m > 0 ? `${m}m ${String(s).padStart(2, "0")}s` : `${s}s`;
}

/**
 * A line of the card. `value` is raw; `ours` marks a value we formatted ourselves (an id, a time), which
 * holds no user text and needs no escaping.
 */
export interface CardFact {
  label: string;
  value: string;
  ours: boolean;
}

/** The facts in the order every card lists them (at most 9). */
export function cardFacts(card: DeploymentCard): CardFact[] {
  const facts: { label: string; value: string | null; ours: boolean }[] = [
    { label: "Project", value: card.project, ours: false },
    { label: "Environment", value: card.environment, ours: false },
    { label: "Status", value: card.status, ours: false },
    { label: "Deployment", value: card.deploymentId === null ? null : `#${card.deploymentId}`, ours: true },
    { label: "Branch", value: card.branch, ours: false },
    { label: "Commit", value: card.commitSha, ours: false },
    { label: "Started", value: card.startedAt, ours: true },
    { label: "Finished", value: card.finishedAt, ours: true },
    { label: "Duration", value: card.duration, ours: true },
  ];
  return facts.filter((fact): fact is CardFact => fact.value !== null);
}

/** "Rollout succeeded: shop to production" (raw: each renderer escapes and cuts it). */
export function cardTitle(card: DeploymentCard): string {
  if (card.project === null) return card.headline;
  const where = card.environment === null ? "" : ` to ${card.environment}`;
  return `${card.headline}: ${card.project}${where}`;
}

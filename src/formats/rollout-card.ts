import type { RolloutDetails } from "./rollout-details.js";
import { fitText, linkableUrl, oneLine } from "./text-limits.js";

// The "What changed" section and the links the chat cards show when an event has rollout details
// (formats/rollout-details.ts), read once so that the four chat formats differ only in shape, like
// deployment-card.ts. Lines are raw text (cleaned of control characters, neither cut nor escaped):
// each renderer escapes them for its markup and cuts them to its own limits. Details come from the
// database as they were stored, possibly by another version: every field is read defensively.

/** How much of the details a card shows: enough to read at a glance, the rest counted. */
export const rolloutCardLimits = {
  /** Image lines shown; the rest become "… and N more images". */
  imageLines: 5,
  links: 4,
  linkName: 60,
  /** A longer link is not shown: four of them must fit every service's message (Teams' 28 KB). */
  linkUrl: 1000,
} as const;

export interface RolloutCard {
  /** "Revision 3 → 4", the images that changed, the version: each one line. */
  lines: string[];
  /** Links a card can open (absolute http(s) URLs), at most rolloutCardLimits.links. */
  links: { name: string; url: string }[];
}

interface ImageLine {
  container?: unknown;
  init?: unknown;
  before?: unknown;
  after?: unknown;
}

// Longer than any card line: the rest of a long value is never read (deployment-card.ts, maxRead).
const str = (value: unknown): string | null =>
  typeof value === "string" && oneLine(value) !== "" ? fitText(oneLine(value.slice(0, 4096)), 1000) : null;

function imageLine(change: ImageLine, previousKnown: boolean): string | null {
  // Compared as stored: two long images that differ only past the cut are still a change.
  if (change.before === change.after && previousKnown) return null;
  const name = `${str(change.container) ?? "?"}${change.init === true ? " (init)" : ""}`;
  const before = str(change.before);
  const after = str(change.after);
  if (after === null) return before === null ? null : `${name} removed (was ${before})`;
  if (before === null) return previousKnown ? `${name} added: ${after}` : `${name}: ${after}`;
  return `${name}: ${before} → ${after}`;
}

/** The card's section for the details, or null when the event has none. */
export function rolloutCard(details: RolloutDetails | null | undefined): RolloutCard | null {
  if (typeof details !== "object" || details === null) return null;
  const changes = (details.changes ?? {}) as Partial<RolloutDetails["changes"]>;
  const previous = str(changes.previous_revision);
  const revision = str(details.workload?.revision);
  const lines: string[] = [];
  if (revision !== null)
    lines.push(previous === null ? `Revision ${revision}` : `Revision ${previous} → ${revision}`);
  const images = (Array.isArray(changes.images) ? changes.images : []) as ImageLine[];
  const changed = images.flatMap((change) => imageLine(change, previous !== null) ?? []);
  lines.push(...changed.slice(0, rolloutCardLimits.imageLines));
  const more = changed.length - rolloutCardLimits.imageLines;
  if (more > 0) lines.push(`… and ${more} more image${more === 1 ? "" : "s"}`);
  if (images.length > 0 && changed.length === 0 && previous !== null) lines.push("Images unchanged");
  const version = str(
    (changes.metadata as Record<string, unknown> | undefined)?.["app.kubernetes.io/version"],
  );
  if (version !== null) lines.push(`Version ${version}`);
  const links = (Array.isArray(details.links) ? details.links : [])
    .flatMap((link) => {
      const name = str(link?.name);
      const url = linkableUrl(typeof link?.url === "string" ? link.url : null, rolloutCardLimits.linkUrl);
      return name !== null && url !== null ? [{ name: fitText(name, rolloutCardLimits.linkName), url }] : [];
    })
    .slice(0, rolloutCardLimits.links);
  return { lines, links };
}

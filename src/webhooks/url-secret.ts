import type { Queryable } from "../db/pool.js";
import { ConflictError } from "../errors.js";
import { z } from "../http/openapi.js";
import { columns, type WebhookRow } from "./store.js";

// A webhook whose URL is a credential (a chat service's incoming-webhook URL holds its token in the
// path) opts in with `url_secret: true`: every answer then shows the URL masked, scheme and host kept
// and the rest as ********, as custom header values are, and delivery errors that quote it are masked
// too. The URL is still written in full and sent in full; it cannot be read back (docs/formats.md).

export const maskedPath = "********";

export const urlSecretField = z.boolean({ error: "url_secret must be a boolean" }).openapi({
  description:
    "true: the url is a secret, shown as scheme://host/******** in every answer and in delivery errors. " +
    "Turned off only with a new url in the same request.",
});

/** `https://hooks.slack.com/services/T0/B0/xyz` → `https://hooks.slack.com/********`. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}/${maskedPath}`;
  } catch {
    return maskedPath;
  }
}

/** The URL as an answer shows it. */
export const shownUrl = (row: Pick<WebhookRow, "url" | "url_secret">): string =>
  row.url_secret ? maskedUrl(row.url) : row.url;

/** A message (a delivery's error) as an answer shows it: the secret URL masked wherever it is quoted. */
export function maskUrlIn<T extends string | null>(text: T, row: Pick<WebhookRow, "url" | "url_secret">): T {
  if (text === null || !row.url_secret) return text;
  return text.split(row.url).join(maskedUrl(row.url)) as T;
}

/**
 * The url an update writes: the masked URL sent back as it was read (a form, a client that reads,
 * changes a field and writes) keeps the stored one. Turning `url_secret` off needs a new url, so an API
 * user who may change a webhook cannot read a secret URL by switching its masking off.
 */
export function urlOfUpdate(
  body: { url?: string | undefined; url_secret?: boolean | undefined },
  stored: WebhookRow,
): string | undefined {
  const url = stored.url_secret && body.url === maskedUrl(stored.url) ? undefined : body.url;
  if (stored.url_secret && body.url_secret === false && url === undefined) {
    throw new ConflictError(
      "The webhook's url is a secret: url_secret can be turned off only with a new url in the same request.",
    );
  }
  return url;
}

/** The row after applying a create's or an update's `url_secret` (undefined: left as it is). */
export async function withUrlSecret(
  db: Queryable,
  row: WebhookRow,
  given: boolean | undefined,
): Promise<WebhookRow> {
  if (given === undefined || given === row.url_secret) return row;
  const { rows } = await db.query<WebhookRow>(
    `UPDATE webhooks SET url_secret = $3 WHERE project_id = $1 AND id = $2 RETURNING ${columns}`,
    [row.project_id, row.id, given],
  );
  return rows[0] ?? row;
}

import { BadRequestError } from "../http/errors.js";

/**
 * The deliveries list pages by keyset, not offset: a cursor names the last row of a page by its sort
 * key (created_at, id), and the next page starts strictly below it. New deliveries arriving while a
 * client pages land above the first page and shift nothing. The text is opaque to clients
 * (base64url), so the key can change without breaking anyone who follows the Link header.
 */
export interface DeliveryCursor {
  createdAt: Date;
  id: number;
}

export function encodeCursor(cursor: DeliveryCursor): string {
  return Buffer.from(`${cursor.createdAt.getTime()}:${cursor.id}`).toString("base64url");
}

const cursorText = /^(\d{1,15}):(\d{1,16})$/;

export function decodeCursor(text: string): DeliveryCursor {
  const match = cursorText.exec(Buffer.from(text, "base64url").toString("utf8"));
  const id = Number(match?.[2]);
  if (!match || !Number.isSafeInteger(id)) {
    throw new BadRequestError(
      "cursor is not a cursor this service issued; start without it and follow the Link header's next address.",
      [{ path: "query.cursor", message: "invalid cursor" }],
    );
  }
  return { createdAt: new Date(Number(match[1])), id };
}

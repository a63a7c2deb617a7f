/**
 * The deliveries list pages by keyset, not offset: a cursor names the last row of a page by its sort
 * key (created_at in ms, id), and the next page starts strictly below it. New deliveries arriving
 * while a client pages land above the first page and shift nothing. Clients treat the text as opaque
 * (they follow the Link header); it is plain `<ms>-<id>` so that the OpenAPI document can say exactly
 * which texts are accepted (cursorPattern): every text of that form is a position, at worst one
 * below which nothing lies (an empty page), never an error.
 */
export interface DeliveryCursor {
  createdAt: Date;
  id: number;
}

/** 15 digits each: within a Date's range and a safe integer (a 16th digit could exceed 2^53). */
export const cursorPattern = /^(\d{1,15})-(\d{1,15})$/;

export function encodeCursor(cursor: DeliveryCursor): string {
  return `${cursor.createdAt.getTime()}-${cursor.id}`;
}

/** Decodes a cursor that matched cursorPattern (the query schema checked it). */
export function decodeCursor(text: string): DeliveryCursor {
  const match = cursorPattern.exec(text);
  return { createdAt: new Date(Number(match?.[1] ?? 0)), id: Number(match?.[2] ?? 0) };
}

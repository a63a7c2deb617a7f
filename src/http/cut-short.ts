import type { z } from "zod";

// What a client sent is quoted back only cut short: an answer stays small whatever the request held
// (a 60 KB body of long unknown field names once came back as a 120 KB message).

/** The most characters of one client-chosen name (a field name, a key of a map) quoted back. */
export const quotedNameLimit = 40;
/** The most unknown field names one message lists; the rest are counted. */
export const listedNamesLimit = 5;
/** The most problems one answer describes; the rest are counted. */
export const describedIssuesLimit = 20;

/** `name` when short, else its first `quotedNameLimit` characters and an ellipsis. */
export function cutShort(name: string): string {
  const characters = [...name];
  return characters.length <= quotedNameLimit ? name : `${characters.slice(0, quotedNameLimit).join("")}…`;
}

/** Zod lists every unknown field name, whole; this lists a few, each cut short. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code !== "unrecognized_keys") return issue.message;
  const listed = issue.keys.slice(0, listedNamesLimit).map((key) => JSON.stringify(cutShort(key)));
  const more = issue.keys.length - listed.length;
  const noun = issue.keys.length === 1 ? "key" : "keys";
  return `Unrecognized ${noun}: ${listed.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

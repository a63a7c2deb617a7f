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

/**
 * The API's spelling of a camelCase name (`signatureScheme` → `signature_scheme`), or undefined when the
 * name has no camelCase hump. The Kubernetes resource spells its fields in camelCase and the API in
 * snake_case, so a user moving between the two types the other one's name.
 */
export function snakeCaseSpelling(name: string): string | undefined {
  if (!/[a-z0-9][A-Z]/.test(name)) return undefined;
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/** Zod lists every unknown field name, whole; this lists a few, each cut short. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code !== "unrecognized_keys") return issue.message;
  const shown = issue.keys.slice(0, listedNamesLimit);
  const listed = shown.map((key) => JSON.stringify(cutShort(key)));
  const more = issue.keys.length - listed.length;
  const noun = issue.keys.length === 1 ? "key" : "keys";
  const spellings = shown.flatMap((key) => {
    const snake = snakeCaseSpelling(key);
    return snake === undefined ? [] : [`"${cutShort(snake)}" for "${cutShort(key)}"`];
  });
  const hint =
    spellings.length === 0 ? "" : ` (the API spells its fields in snake_case: ${spellings.join(", ")})`;
  return `Unrecognized ${noun}: ${listed.join(", ")}${more > 0 ? ` and ${more} more` : ""}${hint}`;
}

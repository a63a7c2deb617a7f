// A webhook's custom headers at rest: sealed like the signing secret, never shown again (only their
// names). The rules they are checked by are formats/custom-header-rules.ts.

/** The stored (sealed) form of a set of headers, in name order (the order they are sent in): null for none. */
export function sealCustomHeaders(
  seal: (clear: string) => string,
  headers: Record<string, string> | null,
): string | null {
  if (headers === null || Object.keys(headers).length === 0) return null;
  const sorted = Object.keys(headers)
    .sort()
    .map((name) => [name, headers[name]]);
  return seal(JSON.stringify(Object.fromEntries(sorted)));
}

// The next-page convention of the cursor lists (docs/api.md, "Pagination"; as GitHub's deliveries API does it):
// `Link: <address>; rel="next"`, absent on the last page. Written by the server, read by the CLI's
// client and the dashboard, so all three agree on the syntax.

export function nextLinkHeader(address: string): string {
  return `<${address}>; rel="next"`;
}

/** The target of the rel="next" link in a Link header, if there is one. */
export function parseNextLink(header: unknown): string | undefined {
  if (typeof header !== "string") return undefined;
  for (const part of header.split(",")) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match?.[1] !== undefined && /\brel\s*=\s*"?next"?/.test(match[2] ?? "")) return match[1];
  }
  return undefined;
}

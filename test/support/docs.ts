import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./tools.js";

// The user documentation's command blocks, read by the tests that run them: a page and its test
// cannot drift apart, since the test runs what the page says.

function pages(): string[] {
  const docs = path.join(repoRoot, "docs");
  const files = existsSync(docs)
    ? readdirSync(docs)
        .filter((file) => file.endsWith(".md"))
        .map((file) => path.join(docs, file))
    : [];
  return [...files, path.join(repoRoot, "README.md")];
}

/** The section under `heading` (up to the next heading of the same or a higher level), and its page. */
export function docSection(heading: string): { page: string; text: string } {
  const level = heading.match(/^#+/)?.[0].length ?? 0;
  for (const page of pages()) {
    const lines = readFileSync(page, "utf8").split("\n");
    const start = lines.indexOf(heading);
    if (start < 0) continue;
    let fenced = false; // "# comment" lines of a shell block are no headings
    const end = lines.findIndex((line, i) => {
      if (line.startsWith("```")) fenced = !fenced;
      return i > start && !fenced && /^#+ /.test(line) && (line.match(/^#+/)?.[0].length ?? 0) <= level;
    });
    return { page, text: lines.slice(start, end < 0 ? undefined : end).join("\n") };
  }
  throw new Error(`no page of docs/ or README.md has the heading "${heading}"`);
}

/** The first fenced block (```sh by default) of a section. */
export function docBlock(heading: string, fence = "```sh"): string {
  const { page, text } = docSection(heading);
  const start = text.indexOf(`${fence}\n`);
  if (start < 0) throw new Error(`"${heading}" in ${page} has no ${fence} block`);
  const body = text.slice(start + fence.length + 1);
  return body.slice(0, body.indexOf("```\n"));
}

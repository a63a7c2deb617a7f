import type { RolloutLink } from "../../formats/rollout-details.js";

// Links carried with each rollout's details (docs/formats.md, "Rollout details"): URL templates from
// ROLLOUT_LINKS, such as a Grafana dashboard or a logs query, rendered per rollout. Each placeholder's
// value is URL-encoded where it is put, so a name cannot end the query parameter it fills.

export const linkPlaceholders = ["namespace", "name", "kind", "revision", "project"] as const;
export type LinkPlaceholder = (typeof linkPlaceholders)[number];

export interface LinkTemplate {
  name: string;
  url: string;
}

/** Bounds of ROLLOUT_LINKS: every event of every rollout carries the links, and cards show them. */
export const linkLimits = { links: 10, nameChars: 80, urlChars: 2000 };

const placeholderPattern = /\{([^{}]*)\}/g;
const sampleValues: Record<LinkPlaceholder, string> = {
  namespace: "shop",
  name: "web",
  kind: "Deployment",
  revision: "1",
  project: "Shop",
};

export function renderLink(template: LinkTemplate, values: Record<LinkPlaceholder, string>): RolloutLink {
  return {
    name: template.name,
    url: template.url.replace(placeholderPattern, (_match, name: string) =>
      encodeURIComponent(values[name as LinkPlaceholder] ?? ""),
    ),
  };
}

/**
 * ROLLOUT_LINKS parsed and checked: a JSON list of `{"name", "url"}`, each url an http(s) URL once its
 * placeholders are filled, with no placeholder but those listed. Throws an Error that says what is
 * wrong with which entry; the process does not start with a list it cannot use.
 */
export function parseLinkTemplates(text: string): LinkTemplate[] {
  if (text.trim() === "") return [];
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(list)) throw new Error('must be a JSON list of {"name": …, "url": …}');
  if (list.length > linkLimits.links) throw new Error(`at most ${linkLimits.links} links`);
  return list.map((entry: unknown, i) => {
    const where = `entry ${i + 1}`;
    const { name, url } = (entry ?? {}) as { name?: unknown; url?: unknown };
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      throw new Error(`${where}: must be an object {"name": …, "url": …}`);
    const extra = Object.keys(entry).filter((key) => key !== "name" && key !== "url");
    if (extra.length > 0) throw new Error(`${where}: unknown field ${extra.join(", ")}`);
    if (typeof name !== "string" || name.trim() === "" || name.length > linkLimits.nameChars)
      throw new Error(`${where}: name must be a string of 1–${linkLimits.nameChars} characters`);
    if (typeof url !== "string" || url.length > linkLimits.urlChars)
      throw new Error(`${where}: url must be a string of at most ${linkLimits.urlChars} characters`);
    for (const [, placeholder] of url.matchAll(placeholderPattern)) {
      if (!(linkPlaceholders as readonly string[]).includes(placeholder ?? ""))
        throw new Error(
          `${where}: unknown placeholder {${placeholder}}; use ${linkPlaceholders.map((p) => `{${p}}`).join(" ")}`,
        );
    }
    const sample = renderLink({ name, url }, sampleValues).url;
    let protocol: string | undefined;
    try {
      protocol = new URL(sample).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== "http:" && protocol !== "https:")
      throw new Error(`${where}: url must be an absolute http:// or https:// URL`);
    return { name: name.trim(), url };
  });
}

import { KubeStatusError } from "./status.js";

/** One requirement of a selector, bound to the SQL expression its key names. */
export interface Requirement {
  /** A SQL expression of the resource's query (a text value), never user input. */
  column: string;
  equals: boolean;
  value: string;
}

/** The keys a resource can be selected by: a label key or a field path, and the SQL text it reads. */
export type Selectable = Record<string, string>;

const requirementShape = /^([A-Za-z0-9][\w./-]*)\s*(==|=|!=)\s*([\w.:/-]*)$/;

function parse(kind: "label" | "field", text: string, keys: Selectable): Requirement[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const match = requirementShape.exec(part);
      if (!match) {
        throw new KubeStatusError(
          "BadRequest",
          `unable to parse requirement: ${kind} selector "${part}": only key=value, key==value and key!=value are supported`,
        );
      }
      const [, key = "", operator, value = ""] = match;
      const column = keys[key];
      if (column === undefined) {
        throw new KubeStatusError(
          "BadRequest",
          `"${key}" is not a known ${kind} selector for this resource (one of: ${Object.keys(keys).join(", ")})`,
        );
      }
      return { column, equals: operator !== "!=", value };
    });
}

/**
 * `labelSelector` and `fieldSelector` of a list or watch, equality-based (set-based forms are refused
 * with a 400, as is an unknown key: a typo must not select everything).
 */
export function parseSelectors(
  query: URLSearchParams,
  selectable: { labels: Selectable; fields: Selectable },
): Requirement[] {
  return [
    ...parse("label", query.get("labelSelector") ?? "", selectable.labels),
    ...parse("field", query.get("fieldSelector") ?? "", selectable.fields),
  ];
}

/** The requirements as SQL conditions with parameters numbered from `first`. */
export function requirementsSql(
  requirements: Requirement[],
  first: number,
): { sql: string; params: string[] } {
  const sql = requirements
    .map(({ column, equals }, index) =>
      equals ? ` AND ${column} = $${first + index}` : ` AND ${column} IS DISTINCT FROM $${first + index}`,
    )
    .join("");
  return { sql, params: requirements.map((requirement) => requirement.value) };
}

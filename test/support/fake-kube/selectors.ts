// FAKE Kubernetes API server for tests: labelSelector and fieldSelector, as list and watch apply them.
import { badRequest } from "./errors.js";
import { isObject, type KubeObject } from "./json.js";

type LabelOp = "exists" | "notexists" | "=" | "!=" | "in" | "notin";
interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}
interface FieldRequirement {
  field: string;
  op: "=" | "!=";
  value: string;
}

export interface Selector {
  matches(obj: KubeObject): boolean;
}

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** Splits on commas that are not inside parentheses (`a in (x,y),b` → two requirements). */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of selector) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function checkKey(key: string, selector: string): string {
  if (!LABEL_KEY.test(key))
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in "${selector}"`);
  return key;
}

function checkValue(value: string, selector: string): string {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw badRequest(`unable to parse requirement: invalid label value "${value}" in "${selector}"`);
  }
  return value;
}

function parseLabelRequirement(text: string, selector: string): LabelRequirement {
  let m = /^!\s*(\S+)$/.exec(text);
  if (m?.[1]) return { key: checkKey(m[1], selector), op: "notexists", values: [] };
  m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text);
  if (m?.[1] && m[2] && m[3] !== undefined) {
    const values = m[3]
      .split(",")
      .map((v) => v.trim())
      .map((v) => checkValue(v, selector));
    return { key: checkKey(m[1], selector), op: m[2] as "in" | "notin", values };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(text);
  if (m?.[1] && m[2]) {
    const op = m[2] === "!=" ? "!=" : "=";
    return { key: checkKey(m[1], selector), op, values: [checkValue(m[3] ?? "", selector)] };
  }
  if (/^\S+$/.test(text)) return { key: checkKey(text, selector), op: "exists", values: [] };
  throw badRequest(`unable to parse requirement: "${text}" in label selector "${selector}"`);
}

function labelMatches(req: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  switch (req.op) {
    case "exists":
      return has;
    case "notexists":
      return !has;
    case "=":
    case "in":
      return has && req.values.includes(value ?? "");
    case "!=":
    case "notin":
      return !has || !req.values.includes(value ?? "");
  }
}

export function parseLabelSelector(selector: string | undefined): Selector {
  const reqs = selector ? splitTopLevel(selector).map((t) => parseLabelRequirement(t, selector)) : [];
  return {
    matches: (obj) => {
      const labels = obj.metadata?.labels ?? {};
      return reqs.every((r) => labelMatches(r, labels));
    },
  };
}

function fieldValue(obj: KubeObject, path: string): string {
  let node: unknown = obj;
  for (const part of path.split(".")) node = isObject(node) ? node[part] : undefined;
  if (node === undefined || node === null) return "";
  return typeof node === "string" ? node : String(node);
}

/**
 * Field selectors: only the fields the real apiserver indexes for that resource are accepted (metadata.name and
 * metadata.namespace everywhere, plus the resource's own list); others answer 400 like the real one does.
 */
export function parseFieldSelector(selector: string | undefined, supported: readonly string[]): Selector {
  const reqs: FieldRequirement[] = [];
  for (const text of selector ? splitTopLevel(selector) : []) {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(text);
    if (!m?.[1] || !m[2]) throw badRequest(`invalid selector: '${selector}'; can't understand '${text}'`);
    const field = m[1];
    if (!["metadata.name", "metadata.namespace", ...supported].includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    reqs.push({ field, op: m[2] === "!=" ? "!=" : "=", value: (m[3] ?? "").trim() });
  }
  return {
    matches: (obj) => reqs.every((r) => (fieldValue(obj, r.field) === r.value) === (r.op === "=")),
  };
}

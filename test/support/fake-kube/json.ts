// FAKE Kubernetes API server for tests: JSON helpers, RFC 7386 merge patch and RFC 6902 JSON patch.
import { KubeStatusError } from "./errors.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: JsonObject[];
  [key: string]: unknown;
}

/** Any Kubernetes object as stored by the fake (plain JSON). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A deep copy through JSON, which is also what the wire does (drops undefined, turns Dates into strings). */
export function toJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return toJson(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function patchError(message: string): KubeStatusError {
  return new KubeStatusError(422, "Invalid", message);
}

function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw patchError(`JSON patch: invalid pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function parentOf(doc: unknown, path: string[], op: string): { parent: unknown; key: string } {
  let node: unknown = doc;
  for (const part of path.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(part)];
    else if (isObject(node)) node = node[part];
    else node = undefined;
    if (node === undefined) throw patchError(`JSON patch ${op}: missing path /${path.join("/")}`);
  }
  return { parent: node, key: path.at(-1) ?? "" };
}

function getAt(doc: unknown, path: string[], op: string): unknown {
  if (path.length === 0) return doc;
  const { parent, key } = parentOf(doc, path, op);
  const value = Array.isArray(parent) ? parent[Number(key)] : isObject(parent) ? parent[key] : undefined;
  if (value === undefined) throw patchError(`JSON patch ${op}: missing value at /${path.join("/")}`);
  return value;
}

function removeAt(doc: unknown, path: string[], op: string): unknown {
  const value = getAt(doc, path, op);
  const { parent, key } = parentOf(doc, path, op);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (isObject(parent)) delete parent[key];
  return value;
}

function addAt(doc: unknown, path: string[], value: unknown, op: string, replace: boolean): unknown {
  if (path.length === 0) return value;
  const { parent, key } = parentOf(doc, path, op);
  if (Array.isArray(parent)) {
    const index = key === "-" ? parent.length : Number(key);
    if (!Number.isInteger(index) || index < 0 || index > parent.length - (replace ? 1 : 0)) {
      throw patchError(`JSON patch ${op}: index out of range at /${path.join("/")}`);
    }
    parent.splice(index, replace ? 1 : 0, value);
  } else if (isObject(parent)) {
    if (replace && !Object.hasOwn(parent, key)) {
      throw patchError(`JSON patch replace: missing value at /${path.join("/")}`);
    }
    parent[key] = value;
  } else {
    throw patchError(`JSON patch ${op}: parent of /${path.join("/")} is not a container`);
  }
  return doc;
}

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test). */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw patchError("JSON patch: the body must be an array of operations");
  let doc = toJson(target);
  for (const raw of operations) {
    if (!isObject(raw) || typeof raw.op !== "string" || typeof raw.path !== "string") {
      throw patchError(`JSON patch: invalid operation ${JSON.stringify(raw)}`);
    }
    const path = parsePointer(raw.path);
    switch (raw.op) {
      case "add":
        doc = addAt(doc, path, toJson(raw.value), "add", false);
        break;
      case "replace":
        doc = addAt(doc, path, toJson(raw.value), "replace", path.length > 0);
        break;
      case "remove":
        removeAt(doc, path, "remove");
        break;
      case "move":
      case "copy": {
        if (typeof raw.from !== "string") throw patchError(`JSON patch ${raw.op}: missing from`);
        const from = parsePointer(raw.from);
        const value = raw.op === "move" ? removeAt(doc, from, "move") : toJson(getAt(doc, from, "copy"));
        doc = addAt(doc, path, value, raw.op, false);
        break;
      }
      case "test":
        if (!deepEqual(getAt(doc, path, "test"), raw.value)) {
          throw patchError(`JSON patch test failed at ${raw.path}`);
        }
        break;
      default:
        throw patchError(`JSON patch: unknown op ${JSON.stringify(raw.op)}`);
    }
  }
  return doc;
}

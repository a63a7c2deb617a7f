// FAKE Kubernetes API server for tests: the part of CRD structural-schema handling the operator relies on.
// Order as in the real apiserver: prune unknown fields (and nulls of non-nullable fields), apply defaults, then
// validate type, required, enum, pattern, length, items, bounds, date-time format and list-type set/map
// uniqueness. CEL rules (x-kubernetes-validations) are NOT evaluated by this fake.
import { fieldError, type StatusCause } from "./errors.js";
import { deepEqual, isObject, toJson } from "./json.js";

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: boolean | JSONSchemaProps;
  required?: string[];
  items?: JSONSchemaProps;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  nullable?: boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
}

const ROOT_SKIP = new Set(["apiVersion", "kind", "metadata"]);
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Prunes unknown fields and nulls, then applies defaults. Returns the new value (input is not modified). */
export function pruneAndDefault(value: unknown, schema: JSONSchemaProps, root = false): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((v) => pruneAndDefault(v, items)) : value;
  }
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true;
  for (const [key, v] of Object.entries(value)) {
    if (root && ROOT_SKIP.has(key)) {
      out[key] = v;
      continue;
    }
    const propSchema =
      schema.properties?.[key] ??
      (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (!propSchema) {
      if (preserve || schema.additionalProperties === true) out[key] = v;
      continue; // pruned
    }
    if (v === null && !propSchema.nullable) continue; // nulls of non-nullable fields are pruned
    out[key] = pruneAndDefault(v, propSchema);
  }
  for (const [key, propSchema] of Object.entries(schema.properties ?? {})) {
    if (!Object.hasOwn(out, key) && propSchema.default !== undefined) {
      out[key] = pruneAndDefault(toJson(propSchema.default), propSchema);
    }
  }
  return out;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function hasType(value: unknown, schema: JSONSchemaProps): boolean {
  if (schema["x-kubernetes-int-or-string"]) return typeof value === "string" || Number.isInteger(value);
  switch (schema.type) {
    case undefined:
      return true;
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return true;
  }
}

/** Validates `value` against `schema`, appending causes with the apiserver's field paths and messages. */
export function validateSchema(
  value: unknown,
  schema: JSONSchemaProps,
  path: string,
  causes: StatusCause[],
  root = false,
): void {
  if (value === null && schema.nullable) return;
  if (!hasType(value, schema)) {
    const expected = schema["x-kubernetes-int-or-string"] ? "integer,string" : schema.type;
    causes.push(
      fieldError.invalid(
        path,
        typeName(value),
        `${path} in body must be of type ${expected}: "${typeName(value)}"`,
      ),
    );
    return;
  }
  if (schema.enum && !schema.enum.some((e) => deepEqual(e, value))) {
    causes.push(fieldError.notSupported(path, value, schema.enum));
  }
  if (typeof value === "string") {
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) {
      causes.push(fieldError.tooLong(path, schema.maxLength));
    }
    if (schema.minLength !== undefined && [...value].length < schema.minLength) {
      causes.push(
        fieldError.invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`),
      );
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
      causes.push(fieldError.invalid(path, value, `${path} in body should match '${schema.pattern}'`));
    }
    if (schema.format === "date-time" && !DATE_TIME.test(value)) {
      causes.push(fieldError.invalid(path, value, `${path} in body must be of type date-time: "${value}"`));
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) {
      causes.push(
        fieldError.invalid(
          path,
          value,
          `${path} in body should be greater than or equal to ${schema.minimum}`,
        ),
      );
    }
    if (schema.maximum !== undefined && value > schema.maximum) {
      causes.push(
        fieldError.invalid(path, value, `${path} in body should be less than or equal to ${schema.maximum}`),
      );
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      causes.push(
        fieldError.invalid(
          path,
          value.length,
          `${path} in body should have at least ${schema.minItems} items`,
        ),
      );
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      causes.push(fieldError.tooMany(path, value.length, schema.maxItems));
    }
    const listType = schema["x-kubernetes-list-type"];
    const mapKeys = schema["x-kubernetes-list-map-keys"] ?? [];
    value.forEach((item, i) => {
      const itemPath = `${path}[${i}]`;
      if (schema.items) validateSchema(item, schema.items, itemPath, causes);
      const earlier = value.slice(0, i);
      if (listType === "set" && earlier.some((e) => deepEqual(e, item))) {
        causes.push(fieldError.duplicate(itemPath, item));
      }
      if (listType === "map" && isObject(item)) {
        const key = Object.fromEntries(mapKeys.map((k) => [k, item[k]]));
        if (earlier.some((e) => isObject(e) && mapKeys.every((k) => deepEqual(e[k], item[k])))) {
          causes.push(fieldError.duplicate(itemPath, key));
        }
      }
    });
  }
  if (isObject(value)) {
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(value, key)) causes.push(fieldError.required(join(path, key)));
    }
    for (const [key, v] of Object.entries(value)) {
      if (root && ROOT_SKIP.has(key)) continue;
      const propSchema =
        schema.properties?.[key] ??
        (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (propSchema) validateSchema(v, propSchema, join(path, key), causes);
    }
  }
}

// FAKE Kubernetes API server for tests: per-request rules of the real registry strategies — body checks,
// decoding, CRD pruning/defaulting/validation, finalizer rules, generation bumps, delete Status.
import { badRequest, fieldError, invalid, type KubeStatus, type StatusCause } from "./errors.js";
import { deepEqual, isObject, type KubeObject, type ObjectMeta, toJson } from "./json.js";
import { apiVersionOf, type ResourceType } from "./resources.js";
import { pruneAndDefault, validateSchema } from "./schema.js";

export type Subresource = "status" | undefined;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function meta(obj: KubeObject): ObjectMeta {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as ObjectMeta;
}

export function withoutResourceVersion(obj: KubeObject): KubeObject {
  const copy = toJson(obj);
  delete meta(copy).resourceVersion;
  return copy;
}

function nonMetadata(obj: KubeObject): KubeObject {
  const { metadata: _m, ...rest } = obj;
  return rest;
}

/** Request body checks and the fields the server fills (apiVersion, kind, namespace from the URL). */
export function checkBody(type: ResourceType, body: unknown, namespace: string | undefined): KubeObject {
  if (!isObject(body)) throw badRequest("the body of the request must be a JSON object");
  const obj = toJson(body) as KubeObject;
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(type)) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersionOf(type)})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== type.kind) {
    throw badRequest(
      `the kind in the data (${String(obj.kind)}) does not match the expected kind (${type.kind})`,
    );
  }
  const m = meta(obj);
  if (type.namespaced) {
    if (m.namespace && m.namespace !== namespace) {
      throw badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    m.namespace = namespace ?? "";
  } else {
    delete m.namespace;
  }
  obj.apiVersion = apiVersionOf(type);
  obj.kind = type.kind;
  return obj;
}

/** Decoding, pruning/defaulting and validation shared by create and update (422/400 on failure). */
export function admit(
  type: ResourceType,
  obj: KubeObject,
  old: KubeObject | undefined,
  sub: Subresource,
): KubeObject {
  let next = obj;
  if (sub !== "status") {
    type.normalize?.(next);
    type.decode?.(next);
  }
  const causes: StatusCause[] = [];
  if (type.schema) {
    next = pruneAndDefault(next, type.schema, true) as KubeObject;
    validateSchema(next, type.schema, "", causes, true);
  }
  if (sub !== "status") causes.push(...(type.validate?.(next, old) ?? []));
  const name = next.metadata?.name ?? "";
  if (!old) {
    const pattern = type.plural === "namespaces" ? DNS_LABEL : DNS_SUBDOMAIN;
    if (!pattern.test(name) || name.length > (type.plural === "namespaces" ? 63 : 253)) {
      causes.unshift(
        fieldError.invalid(
          "metadata.name",
          name,
          `a lowercase RFC 1123 ${type.plural === "namespaces" ? "label" : "subdomain"} must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
        ),
      );
    }
  }
  const oldFinalizers = old?.metadata?.finalizers ?? [];
  const added = (next.metadata?.finalizers ?? []).filter((f) => !oldFinalizers.includes(f));
  if (old?.metadata?.deletionTimestamp && added.length > 0) {
    causes.push(
      fieldError.forbidden(
        "metadata.finalizers",
        `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      ),
    );
  }
  if (causes.length > 0) throw invalid(type, name, causes);
  return next;
}

/** metadata.generation as the real strategies bump it on a main-resource update. */
export function bumpGeneration(type: ResourceType, old: KubeObject, next: KubeObject): void {
  const changed =
    type.generation === "nonMetadata"
      ? !deepEqual(nonMetadata(old), nonMetadata(next))
      : type.generation === "specOrAnnotations"
        ? !deepEqual(old.spec, next.spec) || !deepEqual(old.metadata?.annotations, next.metadata?.annotations)
        : false;
  if (changed) meta(next).generation = (old.metadata?.generation ?? 0) + 1;
}

/** The Success Status a delete answers with when the object is gone (no ReturnDeletedObject). */
export function successStatus(type: ResourceType, obj: KubeObject): KubeStatus {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: {
      name: obj.metadata?.name ?? "",
      group: type.group,
      kind: type.plural,
      uid: obj.metadata?.uid ?? "",
    },
    code: 200,
  };
}

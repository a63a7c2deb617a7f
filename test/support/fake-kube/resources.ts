// FAKE Kubernetes API server for tests: the resource types it serves and their per-type rules
// (defaults, validation and decode errors the real apiserver applies that the operator can run into).
import { readdirSync, readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { badRequest, fieldError, type StatusCause } from "./errors.js";
import { deepEqual, isObject, type KubeObject } from "./json.js";
import type { JSONSchemaProps } from "./schema.js";

/** Which changes bump metadata.generation on the main resource. */
export type GenerationPolicy =
  | "none" // secrets, leases, events, namespaces
  | "nonMetadata" // custom resources: any change outside metadata (status is reset first when it is a subresource)
  | "specOrAnnotations"; // apps/v1 Deployment: spec or metadata.annotations

export interface ResourceType {
  group: string; // "" for the core group
  version: string;
  plural: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  statusSubresource: boolean;
  custom: boolean;
  generation: GenerationPolicy;
  allowCreateOnUpdate: boolean;
  /** Field selector labels accepted besides metadata.name / metadata.namespace. */
  fieldLabels: string[];
  /** CRD openAPIV3Schema (custom resources only): pruning, defaulting, validation. */
  schema?: JSONSchemaProps;
  /** Typed decoding of the request body; throws 400 BadRequest like the real decoder. */
  decode?(obj: KubeObject): void;
  /** Defaults applied on create. */
  prepareForCreate?(obj: KubeObject): void;
  /** Normalisation applied on every write (create and update). */
  normalize?(obj: KubeObject): void;
  validate?(obj: KubeObject, old: KubeObject | undefined): StatusCause[];
}

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** The key a resource type is registered under: `secrets`, `deployments.apps`, `webhooks.webhook-operator.io`. */
export function resourceKey(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

/**
 * metav1.MicroTime only decodes from RFC3339 with exactly six fractional digits ("…:05.123456Z"). A plain JS
 * Date serialises with three ("…:05.123Z") and the real apiserver answers 400; client-node's V1MicroTime class
 * (a Date subclass) serialises correctly.
 */
function checkMicroTime(kind: string, obj: KubeObject, path: string[]): void {
  let node: unknown = obj;
  for (const part of path) node = isObject(node) ? node[part] : undefined;
  if (node === undefined || node === null) return;
  if (typeof node !== "string" || !MICRO_TIME.test(node)) {
    throw badRequest(
      `${kind} in version "v1" cannot be handled as a ${kind}: parsing time ${JSON.stringify(node)} as ` +
        `"2006-01-02T15:04:05.000000Z07:00": cannot parse as RFC3339 with microseconds (field ${path.join(".")})`,
    );
  }
}

function str(obj: unknown, ...path: string[]): string | undefined {
  let node: unknown = obj;
  for (const part of path) node = isObject(node) ? node[part] : undefined;
  return typeof node === "string" ? node : undefined;
}

/** Both event APIs: an event about a namespaced object must live in that object's namespace. */
function eventNamespaceRule(obj: KubeObject, refField: string): StatusCause[] {
  const refNs = str(obj, refField, "namespace") ?? "";
  const ns = obj.metadata?.namespace ?? "";
  if (refNs === "" ? ns !== "" && ns !== "default" : ns !== refNs) {
    return [fieldError.invalid(`${refField}.namespace`, refNs, "does not match event.namespace")];
  }
  return [];
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const core = (plural: string, kind: string, namespaced: boolean) => ({
  group: "",
  version: "v1",
  plural,
  kind,
  listKind: `${kind}List`,
  namespaced,
  custom: false,
});

export const BUILTIN_TYPES: ResourceType[] = [
  {
    ...core("namespaces", "Namespace", false),
    statusSubresource: true,
    generation: "none",
    allowCreateOnUpdate: false,
    fieldLabels: ["status.phase"],
    prepareForCreate(obj) {
      obj.spec = { finalizers: ["kubernetes"] };
      obj.status = { phase: "Active" };
    },
  },
  {
    ...core("secrets", "Secret", true),
    statusSubresource: false,
    generation: "none",
    allowCreateOnUpdate: false,
    fieldLabels: ["type"],
    normalize(obj) {
      // stringData is write-only: merged into data (base64) and never stored.
      if (isObject(obj.stringData)) {
        const data = isObject(obj.data) ? obj.data : {};
        for (const [k, v] of Object.entries(obj.stringData))
          data[k] = Buffer.from(String(v)).toString("base64");
        obj.data = data;
      }
      delete obj.stringData;
      obj.type ??= "Opaque";
    },
    decode(obj) {
      for (const [k, v] of Object.entries(isObject(obj.data) ? obj.data : {})) {
        if (typeof v !== "string" || !BASE64.test(v)) {
          throw badRequest(
            `Secret in version "v1" cannot be handled as a Secret: illegal base64 data in data.${k}`,
          );
        }
      }
    },
    validate(obj, old) {
      if (old?.immutable === true && (!deepEqual(old.data, obj.data) || obj.immutable !== true)) {
        return [fieldError.forbidden("data", "field is immutable when `immutable` is set")];
      }
      return [];
    },
  },
  {
    ...core("events", "Event", true),
    statusSubresource: false,
    generation: "none",
    allowCreateOnUpdate: true,
    fieldLabels: [
      "involvedObject.kind",
      "involvedObject.namespace",
      "involvedObject.name",
      "involvedObject.uid",
      "involvedObject.apiVersion",
      "involvedObject.resourceVersion",
      "involvedObject.fieldPath",
      "reason",
      "reportingComponent",
      "source",
      "type",
    ],
    decode(obj) {
      checkMicroTime("Event", obj, ["eventTime"]);
      checkMicroTime("Event", obj, ["series", "lastObservedTime"]);
    },
    validate: (obj) => eventNamespaceRule(obj, "involvedObject"),
  },
  {
    group: "events.k8s.io",
    version: "v1",
    plural: "events",
    kind: "Event",
    listKind: "EventList",
    namespaced: true,
    custom: false,
    statusSubresource: false,
    generation: "none",
    allowCreateOnUpdate: true,
    fieldLabels: [
      "regarding.kind",
      "regarding.namespace",
      "regarding.name",
      "regarding.uid",
      "regarding.apiVersion",
      "regarding.resourceVersion",
      "regarding.fieldPath",
      "reason",
      "reportingController",
      "type",
    ],
    decode(obj) {
      checkMicroTime("Event", obj, ["eventTime"]);
      checkMicroTime("Event", obj, ["series", "lastObservedTime"]);
    },
    validate(obj) {
      const causes = eventNamespaceRule(obj, "regarding");
      if (!obj.eventTime) causes.push(fieldError.required("eventTime"));
      if (obj.type !== "Normal" && obj.type !== "Warning") {
        causes.push(
          fieldError.invalid("type", obj.type ?? "", `has invalid value: ${String(obj.type ?? "")}`),
        );
      }
      for (const f of ["reportingController", "reportingInstance", "action", "reason"]) {
        if (!str(obj, f)) causes.push(fieldError.required(f));
      }
      return causes;
    },
  },
  {
    group: "apps",
    version: "v1",
    plural: "deployments",
    kind: "Deployment",
    listKind: "DeploymentList",
    namespaced: true,
    custom: false,
    statusSubresource: true,
    generation: "specOrAnnotations",
    allowCreateOnUpdate: false,
    fieldLabels: [],
    prepareForCreate(obj) {
      const spec = isObject(obj.spec) ? obj.spec : {};
      spec.replicas ??= 1;
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      spec.strategy ??= { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } };
      obj.spec = spec;
    },
    validate(obj, old) {
      const causes: StatusCause[] = [];
      const selector = isObject(obj.spec) ? obj.spec.selector : undefined;
      const matchLabels =
        isObject(selector) && isObject(selector.matchLabels) ? selector.matchLabels : undefined;
      if (!selector) causes.push(fieldError.required("spec.selector"));
      const template = isObject(obj.spec) && isObject(obj.spec.template) ? obj.spec.template : {};
      const labels =
        isObject(template.metadata) && isObject(template.metadata.labels) ? template.metadata.labels : {};
      if (matchLabels && !Object.entries(matchLabels).every(([k, v]) => labels[k] === v)) {
        causes.push(
          fieldError.invalid(
            "spec.template.metadata.labels",
            labels,
            "`selector` does not match template `labels`",
          ),
        );
      }
      if (old && isObject(old.spec) && !deepEqual(old.spec.selector, selector)) {
        causes.push(fieldError.invalid("spec.selector", selector, "field is immutable"));
      }
      return causes;
    },
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    plural: "leases",
    kind: "Lease",
    listKind: "LeaseList",
    namespaced: true,
    custom: false,
    statusSubresource: false,
    generation: "none",
    allowCreateOnUpdate: false,
    fieldLabels: [],
    decode(obj) {
      checkMicroTime("Lease", obj, ["spec", "acquireTime"]);
      checkMicroTime("Lease", obj, ["spec", "renewTime"]);
    },
    validate(obj) {
      const spec = isObject(obj.spec) ? obj.spec : {};
      const causes: StatusCause[] = [];
      if (spec.leaseDurationSeconds !== undefined && !(Number(spec.leaseDurationSeconds) > 0)) {
        causes.push(
          fieldError.invalid(
            "spec.leaseDurationSeconds",
            spec.leaseDurationSeconds,
            "must be greater than 0",
          ),
        );
      }
      if (spec.leaseTransitions !== undefined && !(Number(spec.leaseTransitions) >= 0)) {
        causes.push(
          fieldError.invalid(
            "spec.leaseTransitions",
            spec.leaseTransitions,
            "must be greater than or equal to 0",
          ),
        );
      }
      return causes;
    },
  },
];

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  subresources?: { status?: unknown };
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  selectableFields?: { jsonPath: string }[];
}

/** Resource types (one per served version) from an apiextensions.k8s.io/v1 CustomResourceDefinition object. */
export function typesFromCrd(crd: unknown): ResourceType[] {
  const spec = isObject(crd) && isObject(crd.spec) ? crd.spec : undefined;
  if (!spec || !isObject(spec.names) || !Array.isArray(spec.versions)) {
    throw new Error("fake kube-apiserver: not a CustomResourceDefinition");
  }
  const names = spec.names as { plural: string; kind: string; listKind?: string };
  return (spec.versions as CrdVersion[])
    .filter((v) => v.served !== false)
    .map((v) => ({
      group: String(spec.group),
      version: v.name,
      plural: names.plural,
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      namespaced: spec.scope !== "Cluster",
      custom: true,
      statusSubresource: v.subresources?.status !== undefined,
      generation: "nonMetadata" as const,
      allowCreateOnUpdate: false,
      fieldLabels: (v.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, "")),
      ...(v.schema?.openAPIV3Schema ? { schema: v.schema.openAPIV3Schema } : {}),
    }));
}

/**
 * The CRDs shipped in the repository's crds/ directory (the generated Webhook CRD), as plain wire JSON. Not
 * client-node's loadAllYaml: it deserialises into model classes (`default` becomes `_default`, …).
 */
export function repositoryCrds(): unknown[] {
  const dir = new URL("../../../crds/", import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(new URL(f, dir), "utf8")).map((d) => d.toJSON() as unknown),
    )
    .filter((doc) => isObject(doc) && doc.kind === "CustomResourceDefinition");
}

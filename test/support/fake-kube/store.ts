// FAKE Kubernetes API server for tests: object storage with the write semantics of the real apiserver's
// generic registry (single global resourceVersion, preconditions, status subresource, generation, finalizers,
// namespace lifecycle) and an event history that watches replay from.
import { randomInt, randomUUID } from "node:crypto";
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  fieldError,
  forbidden,
  invalid,
  type KubeStatus,
  KubeStatusError,
  notFound,
  qualifiedResource,
  unsupportedMediaType,
} from "./errors.js";
import { deepEqual, isObject, jsonPatch, type KubeObject, mergePatch, toJson } from "./json.js";
import { type ResourceType, resourceKey } from "./resources.js";
import {
  admit,
  bumpGeneration,
  checkBody,
  meta,
  type Subresource,
  successStatus,
  withoutResourceVersion,
} from "./strategy.js";

export type { Subresource } from "./strategy.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoredEvent {
  type: WatchEventType;
  rv: number;
  resource: ResourceType;
  object: KubeObject;
  /** The object before a MODIFIED event (watches with selectors turn MODIFIED into ADDED/DELETED with it). */
  previous?: KubeObject;
}

export interface WriteOptions {
  dryRun?: boolean;
}

export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}

const GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/** metav1.Time: RFC3339 with second precision, as the apiserver writes it. */
export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export class FakeKubeStore {
  private rv: number;
  private compactedRv: number;
  private readonly types = new Map<string, ResourceType>();
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private history: StoredEvent[] = [];
  private readonly listeners = new Set<(event: StoredEvent) => void>();

  constructor(
    types: ResourceType[],
    private readonly requireNamespaces: boolean,
    initialResourceVersion = 100,
  ) {
    this.rv = initialResourceVersion;
    this.compactedRv = initialResourceVersion;
    for (const type of types) this.types.set(resourceKey(type), type);
  }

  /** `deployments`, `deployments.apps`, `webhooks`, `events` (core), `events.events.k8s.io`, … */
  resolve(ref: string): ResourceType {
    const exact = this.types.get(ref);
    if (exact) return exact;
    const byPlural = [...this.types.values()].filter((t) => t.plural === ref);
    const chosen = byPlural.find((t) => t.group === "") ?? byPlural[0];
    if (!chosen) throw new Error(`fake kube-apiserver: unknown resource ${JSON.stringify(ref)}`);
    return chosen;
  }

  findByPath(group: string, version: string, plural: string): ResourceType | undefined {
    const type = this.types.get(group ? `${plural}.${group}` : plural);
    return type?.version === version ? type : undefined;
  }

  allTypes(): ResourceType[] {
    return [...this.types.values()];
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  subscribe(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the history: watches from any resourceVersion older than the current one get 410 Expired. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  /** True when `rv` is older than the kept history (watches and continue tokens from it get 410). */
  isTooOld(rv: number): boolean {
    return rv < this.compactedRv;
  }

  /** Events of `type` after `fromRv`, or 410 Expired when that version is older than the kept history. */
  eventsSince(type: ResourceType, fromRv: number): StoredEvent[] {
    if (fromRv < this.compactedRv) {
      throw expired(`too old resource version: ${fromRv} (${this.compactedRv})`);
    }
    return this.history.filter((e) => e.resource === type && e.rv > fromRv);
  }

  private bucket(type: ResourceType): Map<string, KubeObject> {
    const key = resourceKey(type);
    let bucket = this.objects.get(key);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(key, bucket);
    }
    return bucket;
  }

  private static key(type: ResourceType, namespace: string | undefined, name: string): string {
    return type.namespaced ? `${namespace ?? ""}/${name}` : name;
  }

  private raw(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.bucket(type).get(FakeKubeStore.key(type, namespace, name));
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.raw(type, namespace, name);
    if (!obj) throw notFound(type, name);
    return toJson(obj);
  }

  list(type: ResourceType, namespace: string | undefined): { items: KubeObject[]; resourceVersion: string } {
    const items = [...this.bucket(type).entries()]
      .filter(([, obj]) => !type.namespaced || !namespace || obj.metadata?.namespace === namespace)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => toJson(obj));
    return { items, resourceVersion: this.resourceVersion() };
  }

  private commit(
    type: ResourceType,
    eventType: WatchEventType,
    obj: KubeObject,
    previous?: KubeObject,
  ): void {
    this.rv += 1;
    meta(obj).resourceVersion = String(this.rv);
    const key = FakeKubeStore.key(type, obj.metadata?.namespace, obj.metadata?.name ?? "");
    if (eventType === "DELETED") this.bucket(type).delete(key);
    else this.bucket(type).set(key, toJson(obj));
    const event: StoredEvent = { type: eventType, rv: this.rv, resource: type, object: toJson(obj) };
    if (previous) event.previous = toJson(previous);
    this.history.push(event);
    for (const listener of this.listeners) listener(event);
  }

  /** Decoding, pruning/defaulting and validation shared by create and update. */
  create(
    type: ResourceType,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions = {},
  ): KubeObject {
    const obj = checkBody(type, body, namespace);
    const m = meta(obj);
    if (!m.name && m.generateName) {
      m.name = m.generateName + Array.from({ length: 5 }, () => GENERATE_ALPHABET[randomInt(27)]).join("");
    }
    if (!m.name)
      throw invalid(type, "", [fieldError.required("metadata.name", "name or generateName is required")]);
    if (m.resourceVersion) {
      throw new KubeStatusError(
        500,
        "InternalError",
        "Internal error occurred: resourceVersion should not be set on objects to be created",
      );
    }
    if (type.namespaced) {
      const ns = this.raw(this.resolve("namespaces"), undefined, m.namespace ?? "");
      if (!ns && this.requireNamespaces) throw notFound(this.resolve("namespaces"), m.namespace ?? "");
      if (ns?.metadata?.deletionTimestamp) {
        throw forbidden(
          `${qualifiedResource(type)} "${m.name}" is forbidden: unable to create new content in namespace ${m.namespace} because it is being terminated`,
        );
      }
    }
    if (this.raw(type, m.namespace, m.name)) throw alreadyExists(type, m.name);
    m.uid = randomUUID();
    m.creationTimestamp = nowTimestamp();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.generation;
    if (type.generation !== "none") m.generation = 1;
    if (type.statusSubresource) {
      if (type.custom) delete obj.status;
      else obj.status = {};
    }
    type.prepareForCreate?.(obj);
    const admitted = admit(type, obj, undefined, undefined);
    if (opts.dryRun) return admitted;
    this.commit(type, "ADDED", admitted);
    return toJson(admitted);
  }

  /** PUT (main resource or /status). Returns the stored object, or a Success Status if emptied finalizers deleted it. */
  update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    sub: Subresource,
    opts: WriteOptions = {},
  ): KubeObject | KubeStatus {
    const existing = this.raw(type, namespace, name);
    const incoming = checkBody(type, body, namespace);
    const inMeta = meta(incoming);
    if (inMeta.name !== name) {
      throw badRequest(
        `the name of the object (${inMeta.name ?? ""}) does not match the name on the URL (${name})`,
      );
    }
    if (!existing) {
      if (type.allowCreateOnUpdate && sub === undefined) {
        delete inMeta.resourceVersion;
        return this.create(type, namespace, incoming, opts);
      }
      throw notFound(type, name);
    }
    if (inMeta.resourceVersion && inMeta.resourceVersion !== existing.metadata?.resourceVersion) {
      throw conflict(type, name);
    }
    let next: KubeObject;
    if (sub === "status") {
      next = toJson(existing);
      if (Object.hasOwn(incoming, "status")) next.status = incoming.status;
      else delete next.status;
    } else {
      next = incoming;
      if (type.statusSubresource) {
        if (Object.hasOwn(existing, "status")) next.status = toJson(existing.status);
        else delete next.status;
      }
      const m = meta(next);
      const old = existing.metadata ?? {};
      for (const field of [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
      ] as const) {
        if (old[field] === undefined) delete m[field];
        else m[field] = old[field] as never;
      }
    }
    meta(next).resourceVersion = existing.metadata?.resourceVersion ?? "";
    next = admit(type, next, existing, sub);
    if (sub === undefined) bumpGeneration(type, existing, next);

    if (existing.metadata?.deletionTimestamp && (next.metadata?.finalizers ?? []).length === 0) {
      // The last finalizer is gone: the object is deleted instead of updated (one DELETED event, no MODIFIED).
      if (!opts.dryRun) this.remove(type, existing);
      return successStatus(type, existing);
    }
    if (deepEqual(withoutResourceVersion(next), withoutResourceVersion(existing))) {
      return toJson(existing); // no-op write: no new resourceVersion, no watch event
    }
    if (opts.dryRun) return next;
    this.commit(type, "MODIFIED", next, existing);
    return toJson(next);
  }

  patch(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    contentType: string,
    patch: unknown,
    sub: Subresource,
    opts: WriteOptions = {},
  ): KubeObject | KubeStatus {
    const existing = this.get(type, namespace, name);
    const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
    let patched: unknown;
    switch (mediaType) {
      case "application/merge-patch+json":
        patched = mergePatch(existing, patch);
        break;
      case "application/json-patch+json":
        patched = jsonPatch(existing, patch);
        break;
      case "application/strategic-merge-patch+json":
        if (type.custom) {
          throw unsupportedMediaType(
            `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
          );
        }
        patched = mergePatch(existing, patch); // FAKE: approximated as a JSON merge patch (no patchMergeKey lists)
        break;
      case "application/apply-patch+yaml":
      case "application/apply-patch+cbor":
        throw unsupportedMediaType(
          "FAKE kube-apiserver: server-side apply is not implemented by this test double",
        );
      default:
        throw unsupportedMediaType(`the body of the request was in an unknown format - ${mediaType}`);
    }
    return this.update(type, namespace, name, patched, sub, opts);
  }

  delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): KubeObject | KubeStatus {
    const existing = this.raw(type, namespace, name);
    if (!existing) throw notFound(type, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== existing.metadata?.uid) {
      throw conflict(
        type,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata?.uid}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== existing.metadata?.resourceVersion) {
      throw conflict(
        type,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata?.resourceVersion}`,
      );
    }
    const isNamespace = type.plural === "namespaces" && type.group === "";
    if (isNamespace || (existing.metadata?.finalizers ?? []).length > 0) {
      if (existing.metadata?.deletionTimestamp) return toJson(existing);
      const next = toJson(existing);
      const m = meta(next);
      m.deletionTimestamp = nowTimestamp();
      m.deletionGracePeriodSeconds = 0;
      if ((m.generation ?? 0) > 0) m.generation = (m.generation ?? 0) + 1;
      if (isNamespace) next.status = { ...(isObject(next.status) ? next.status : {}), phase: "Terminating" };
      if (opts.dryRun) return next;
      this.commit(type, "MODIFIED", next, existing);
      if (isNamespace) this.terminateNamespace(name);
      return toJson(this.raw(type, namespace, name) ?? next);
    }
    if (!opts.dryRun) this.remove(type, existing);
    return successStatus(type, existing);
  }

  private remove(type: ResourceType, existing: KubeObject): void {
    this.commit(type, "DELETED", toJson(existing));
    const ns = existing.metadata?.namespace;
    if (type.namespaced && ns) this.finishNamespaceIfEmpty(ns);
  }

  /** What the namespace controller does: delete everything in it, then drop the namespace once empty. */
  private terminateNamespace(ns: string): void {
    for (const type of this.allTypes().filter((t) => t.namespaced)) {
      for (const obj of this.list(type, ns).items) {
        if (obj.metadata?.name && !obj.metadata.deletionTimestamp) this.delete(type, ns, obj.metadata.name);
      }
    }
    this.finishNamespaceIfEmpty(ns);
  }

  private finishNamespaceIfEmpty(ns: string): void {
    const nsType = this.resolve("namespaces");
    const nsObj = this.raw(nsType, undefined, ns);
    if (!nsObj?.metadata?.deletionTimestamp || (nsObj.metadata.finalizers ?? []).length > 0) return;
    const remaining = this.allTypes().some((t) => t.namespaced && this.list(t, ns).items.length > 0);
    if (!remaining) this.commit(nsType, "DELETED", toJson(nsObj));
  }
}

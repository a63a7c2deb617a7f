/**
 * FAKE Kubernetes API server for tests — not a real kube-apiserver; implements only the semantics the operator
 * relies on, over real HTTP on 127.0.0.1 so @kubernetes/client-node talks to it exactly as to a cluster:
 *
 * - resources: core/v1 namespaces (cluster-scoped), secrets, events; events.k8s.io/v1 events; apps/v1
 *   deployments (+/status); coordination.k8s.io/v1 leases; every CRD in crds/ (webhook-operator.io/v1alpha1
 *   webhooks, +/status), or the CRDs passed in options;
 * - verbs: list (labelSelector, fieldSelector on metadata.name/metadata.namespace and the resource's indexed
 *   fields, limit/continue), watch, get, create (generateName), update (PUT), patch (merge-patch, json-patch;
 *   strategic-merge-patch only for built-ins and approximated as a merge patch), delete (preconditions), dryRun;
 * - one global resourceVersion counter; list metadata.resourceVersion; `watch=true&resourceVersion=N` streams the
 *   events after N as newline-delimited JSON; no/"0" resourceVersion first sends ADDED for current objects; a
 *   resourceVersion older than the kept history gets HTTP 200 + one ERROR event with a 410 "Expired" Status
 *   (as the real watch cache does); selectors turn MODIFIED into ADDED/DELETED when an object enters/leaves them;
 * - 409 Conflict on a stale metadata.resourceVersion (PUT, and patches that carry one), 409 AlreadyExists,
 *   404 NotFound, 422 Invalid with causes, 400 BadRequest — all as metav1.Status bodies;
 * - uid, creationTimestamp, generation assigned on create; server-managed metadata kept on update; writes that
 *   change nothing produce no new resourceVersion and no event;
 * - status subresource: main-resource writes keep the stored status, /status writes change only status;
 *   metadata.generation bumps on any non-metadata change for custom resources, on spec or annotation changes for
 *   Deployments (like the real strategies), and when deletion starts;
 * - finalizers: DELETE of an object with finalizers sets deletionTimestamp (MODIFIED); it disappears (one DELETED
 *   event) when a write removes the last finalizer; no finalizers can be added while deleting;
 * - namespaces: objects can only be created in an existing, non-terminating namespace; deleting a namespace
 *   deletes its contents (finalizers respected), and the namespace goes once empty;
 * - CRD structural schema: pruning, defaults, and validation of type/required/enum/pattern/lengths/items/bounds/
 *   date-time/list-type — but NOT CEL (x-kubernetes-validations);
 * - typed decoding the operator can trip on: metav1.MicroTime fields (Lease acquireTime/renewTime, Event
 *   eventTime) must have exactly 6 fractional digits, Secret data must be base64; stringData is folded into data.
 *
 * Not implemented (do not rely on them here): authn/authz, admission webhooks, server-side apply, garbage
 * collection of ownerReferences, the Deployment controller (tests set Deployment status themselves), the shared
 * storage of core and events.k8s.io events (they are two separate collections here), CEL rules, managedFields,
 * resourceVersionMatch on list (lists always serve the latest state).
 *
 * client-node 2.x facts these tests pin down (test/unit/fake-kube-apiserver.test.ts):
 * - an http:// cluster needs `skipTLSVerify: true` (yaml: insecure-skip-tls-verify) or every call throws;
 * - patch calls send `application/json-patch+json` unless given `setHeaderOptions("Content-Type",
 *   PatchStrategy.MergePatch)` as the second argument; ApiException.body is the raw Status text (JSON.parse it);
 * - an informer (makeInformer/ListWatch) re-lists by itself after a 410 (ERROR event or HTTP 410) and re-watches
 *   after a clean end of stream (first at once, then backing off 1 s, 2 s … 30 s while no event arrives), but on a
 *   network error or a failed list it emits 'error' and STOPS: the operator must call informer.start() again
 *   (after a backoff); start() resumes from the last resourceVersion and re-lists only if that is too old;
 * - informer objects from the list are model instances (Date timestamps, no kind), those from watch events are
 *   plain JSON (string timestamps, with kind); V1MicroTime fields come back as strings.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeStatus } from "./fake-kube/errors.js";
import { type FailureRule, FakeKubeHttp, type RecordedRequest } from "./fake-kube/http.js";
import type { KubeObject } from "./fake-kube/json.js";
import { BUILTIN_TYPES, repositoryCrds, typesFromCrd } from "./fake-kube/resources.js";
import { FakeKubeStore, type WriteOptions } from "./fake-kube/store.js";

export { KubeStatusError } from "./fake-kube/errors.js";
export type { FailureRule, KubeObject, KubeStatus, RecordedRequest };

/**
 * A resource: `namespaces`, `secrets`, `events` (core/v1), `events.events.k8s.io`, `deployments`, `leases`,
 * `webhooks` — or the qualified `deployments.apps`, `leases.coordination.k8s.io`, `webhooks.webhook-operator.io`.
 */
export type ResourceRef =
  | "namespaces"
  | "secrets"
  | "events"
  | "events.events.k8s.io"
  | "deployments"
  | "deployments.apps"
  | "leases"
  | "leases.coordination.k8s.io"
  | "webhooks"
  | "webhooks.webhook-operator.io"
  | (string & {});

/** What the test-side writes accept: plain objects or client-node models (V1Deployment, …). */
export interface ObjectInput {
  metadata?: { name?: string; namespace?: string };
}

/** Which object: `name` plus `namespace` for namespaced resources. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

export interface FakeKubeApiServerOptions {
  /** CustomResourceDefinition objects to serve; default: every CRD in the repository's crds/ directory. */
  crds?: unknown[];
  /** Namespaces that exist at start; default default, kube-system, kube-public, kube-node-lease. */
  namespaces?: string[];
  /** Refuse to create namespaced objects in a namespace that does not exist (default true, like the real one). */
  requireNamespaces?: boolean;
  /**
   * How a watch from a too-old resourceVersion is refused: "error-event" (default; what the real watch cache does:
   * HTTP 200 + ERROR event with a 410 Expired Status) or "http-410" (a plain HTTP 410 with a Status body).
   */
  expiredWatchResponse?: "error-event" | "http-410";
}

export interface OpenWatchInfo {
  resource: string;
  path: string;
  query: Record<string, string>;
}

export interface FakeKubeApiServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** A client-node KubeConfig for this server (plain http needs skipTLSVerify: true in client-node 2.x). */
  kubeConfig(namespace?: string): KubeConfig;
  /** The same as kubeconfig YAML, e.g. for KUBECONFIG of a spawned operator process. */
  kubeConfigYaml(namespace?: string): string;

  // Direct, test-side manipulation (bypasses HTTP, same semantics, emits the same watch events).
  create<T extends ObjectInput = KubeObject>(resource: ResourceRef, obj: T, opts?: WriteOptions): T;
  /** PUT semantics: a metadata.resourceVersion in `obj` is a precondition (409 when stale). */
  update<T extends ObjectInput = KubeObject>(resource: ResourceRef, obj: T, opts?: WriteOptions): T;
  /** JSON merge patch of the main resource (status is ignored where it is a subresource). */
  patch<T extends KubeObject = KubeObject>(resource: ResourceRef, key: ObjectKey, patch: unknown): T;
  /** JSON merge patch of `status` through the status subresource (what a controller's status writer does). */
  patchStatus<T extends KubeObject = KubeObject>(resource: ResourceRef, key: ObjectKey, status: unknown): T;
  /** DELETE semantics: with finalizers the object stays with a deletionTimestamp (returned); else it is gone. */
  delete(resource: ResourceRef, key: ObjectKey): KubeObject | KubeStatus;
  get<T extends KubeObject = KubeObject>(resource: ResourceRef, key: ObjectKey): T | undefined;
  list<T extends KubeObject = KubeObject>(resource: ResourceRef, namespace?: string): T[];
  /** The current global resourceVersion. */
  resourceVersion(): string;

  // Fault injection.
  /** Compacts history, then ends every open watch with an ERROR 410 Expired event: clients must re-list. */
  expireWatches(): void;
  /** Ends every open watch stream cleanly (like the server-side watch timeout): clients re-watch from their RV. */
  closeWatches(): void;
  /** Destroys the sockets of every open watch abruptly (network failure): client-node's informer emits 'error'. */
  dropWatchConnections(): void;
  /** Forgets the event history: a watch from any older resourceVersion gets 410 Expired. */
  compactHistory(): void;
  /** Sends a BOOKMARK with the current resourceVersion to watches that asked for allowWatchBookmarks. */
  sendBookmarks(): void;
  /** Answers the next matching request(s) with an error Status instead of serving it. */
  injectFailure(rule: FailureRule): void;

  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Watches currently open. */
  openWatches(): OpenWatchInfo[];
  /** Resolves when at least `count` watches on `resource` are open (default timeout 5 s). */
  waitForWatches(resource: ResourceRef, count?: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function asObject<T>(value: unknown): T {
  return value as T;
}

export async function startFakeKubeApiServer(
  options: FakeKubeApiServerOptions = {},
): Promise<FakeKubeApiServer> {
  const crds = options.crds ?? repositoryCrds();
  const store = new FakeKubeStore(
    [...BUILTIN_TYPES, ...crds.flatMap(typesFromCrd)],
    options.requireNamespaces ?? true,
  );
  for (const ns of options.namespaces ?? ["default", "kube-system", "kube-public", "kube-node-lease"]) {
    store.create(store.resolve("namespaces"), undefined, { metadata: { name: ns } });
  }
  const http = new FakeKubeHttp(store, {
    expiredWatchResponse: options.expiredWatchResponse ?? "error-event",
  });
  const server = createServer((req, res) => http.handle(req, res));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const nsOf = (resource: ResourceRef, key: ObjectKey | ObjectInput): string | undefined => {
    if (!store.resolve(resource).namespaced) return undefined;
    if ("name" in key && typeof key.name === "string") return (key as ObjectKey).namespace ?? "default";
    return (key as ObjectInput).metadata?.namespace ?? "default";
  };
  const options_ = {
    clusters: [{ name: "fake", server: url, skipTLSVerify: true }],
    users: [{ name: "fake" }],
  };

  const fake: FakeKubeApiServer = {
    url,
    requests: http.requests,
    kubeConfig(namespace) {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        ...options_,
        contexts: [{ name: "fake", cluster: "fake", user: "fake", ...(namespace ? { namespace } : {}) }],
        currentContext: "fake",
      });
      return kc;
    },
    kubeConfigYaml(namespace) {
      return [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "  - name: fake",
        "    cluster:",
        `      server: ${url}`,
        "      insecure-skip-tls-verify: true",
        "users:",
        "  - name: fake",
        "    user: {}",
        "contexts:",
        "  - name: fake",
        "    context:",
        "      cluster: fake",
        "      user: fake",
        ...(namespace ? [`      namespace: ${namespace}`] : []),
        "current-context: fake",
        "",
      ].join("\n");
    },
    create(resource, obj, opts) {
      return asObject(store.create(store.resolve(resource), nsOf(resource, obj), obj, opts));
    },
    update(resource, obj, opts) {
      const name = obj.metadata?.name ?? "";
      return asObject(store.update(store.resolve(resource), nsOf(resource, obj), name, obj, undefined, opts));
    },
    patch(resource, key, patch) {
      const type = store.resolve(resource);
      return asObject(
        store.patch(type, nsOf(resource, key), key.name, "application/merge-patch+json", patch, undefined),
      );
    },
    patchStatus(resource, key, status) {
      const type = store.resolve(resource);
      const sub = type.statusSubresource ? "status" : undefined;
      return asObject(
        store.patch(type, nsOf(resource, key), key.name, "application/merge-patch+json", { status }, sub),
      );
    },
    delete(resource, key) {
      return store.delete(store.resolve(resource), nsOf(resource, key), key.name);
    },
    get(resource, key) {
      try {
        return asObject(store.get(store.resolve(resource), nsOf(resource, key), key.name));
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    },
    list(resource, namespace) {
      return asObject(store.list(store.resolve(resource), namespace).items);
    },
    resourceVersion: () => store.resourceVersion(),
    expireWatches() {
      store.compact();
      const status = {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        reason: "Expired",
        code: 410,
      };
      for (const w of [...http.watches]) {
        const message = `too old resource version: ${w.lastResourceVersion} (${store.resourceVersion()})`;
        w.send("ERROR", { ...status, message });
        w.end();
      }
    },
    closeWatches() {
      for (const w of [...http.watches]) w.end();
    },
    dropWatchConnections() {
      for (const w of [...http.watches]) w.destroy();
    },
    compactHistory: () => store.compact(),
    sendBookmarks() {
      for (const w of http.watches) {
        if (w.query.allowWatchBookmarks !== "true") continue;
        w.send("BOOKMARK", {
          kind: w.resource.kind,
          apiVersion: w.resource.group ? `${w.resource.group}/${w.resource.version}` : w.resource.version,
          metadata: { resourceVersion: store.resourceVersion() },
        });
      }
    },
    injectFailure: (rule) => http.injectFailure(rule),
    openWatches: () =>
      [...http.watches].map((w) => ({
        resource: w.resource.group ? `${w.resource.plural}.${w.resource.group}` : w.resource.plural,
        path: w.path,
        query: w.query,
      })),
    async waitForWatches(resource, count = 1, timeoutMs = 5000) {
      const type = store.resolve(resource);
      const deadline = Date.now() + timeoutMs;
      while ([...http.watches].filter((w) => w.resource === type).length < count) {
        if (Date.now() > deadline) {
          throw new Error(
            `fake kube-apiserver: fewer than ${count} open watch(es) on ${resource} after ${timeoutMs} ms`,
          );
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      for (const w of [...http.watches]) w.end();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  return fake;
}

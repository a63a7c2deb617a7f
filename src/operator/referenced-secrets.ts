import { type CoreV1Api, type KubeConfig, type V1Secret, Watch } from "@kubernetes/client-node";
import type { Logger } from "../logger.js";
import { isNotFound } from "./kube-errors.js";

/**
 * The Secrets that Webhook resources reference, and only those (as Flux does: no cluster-wide Secret
 * cache, no `list secrets` permission). A Secret is read with one GET when a Webhook first references
 * it, then kept current by a watch on that one name (`fieldSelector=metadata.name=…`, which RBAC
 * authorises as a request for that name); `onChange` hears of every change so the Webhooks using it
 * are reconciled promptly. When no Webhook references a Secret any more, its watch ends and its
 * value is forgotten.
 */
export interface ReferencedSecrets {
  /** The Secret `namespace/name`, which `webhook` (a "namespace/name" key) now references. */
  read(webhook: string, namespace: string, name: string): Promise<V1Secret | undefined>;
  /** `webhook` now references only the Secrets `namespace/name` of `names`: drop its other references. */
  retain(webhook: string, namespace: string, names: string[]): void;
  /** `webhook` references no Secret (any more): drop its references. */
  release(webhook: string): void;
  stop(): void;
}

interface Entry {
  namespace: string;
  name: string;
  users: Set<string>;
  secret: V1Secret | undefined;
  loaded: Promise<void>;
  resourceVersion: string | undefined;
  failures: number;
  abort?: () => void;
  retry?: NodeJS.Timeout;
  stopped: boolean;
}

// client-node's Watch aborts a connection that is quiet for 30 s (not configurable), and a quiet
// Secret sends nothing: so the server ends each watch a little earlier, a clean close that is resumed
// at once from the last resourceVersion without reading the Secret again. One request per 25 s per
// referenced Secret.
const watchTimeoutSeconds = 25;

export function referencedSecrets(options: {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  onChange(namespace: string, name: string, webhooks: string[]): void;
  logger: Logger;
}): ReferencedSecrets {
  const entries = new Map<string, Entry>();
  /** The Secrets ("namespace/name") each Webhook references: its signing key, URL and header values. */
  const usedBy = new Map<string, Set<string>>();
  const watcher = new Watch(options.kubeConfig);

  async function load(entry: Entry): Promise<void> {
    try {
      entry.secret = await options.core.readNamespacedSecret({
        namespace: entry.namespace,
        name: entry.name,
      });
      entry.resourceVersion = entry.secret.metadata?.resourceVersion;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // Absent for now. A watch without a resourceVersion starts with the Secret's current state, so
      // one created between this GET and the watch still arrives (as ADDED).
      entry.secret = undefined;
      entry.resourceVersion = undefined;
    }
  }

  function changed(entry: Entry) {
    options.onChange(entry.namespace, entry.name, [...entry.users]);
  }

  async function watch(entry: Entry): Promise<void> {
    if (entry.stopped) return;
    const request = await watcher.watch(
      `/api/v1/namespaces/${entry.namespace}/secrets`,
      {
        fieldSelector: `metadata.name=${entry.name}`,
        resourceVersion: entry.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: watchTimeoutSeconds,
      },
      (phase: string, object: V1Secret) => {
        entry.failures = 0;
        if (object.metadata?.resourceVersion) entry.resourceVersion = object.metadata.resourceVersion;
        if (phase === "BOOKMARK") return;
        if (phase === "ERROR") {
          // 410 Gone and its kind: forget the resourceVersion, so the restart reads the Secret anew.
          entry.resourceVersion = undefined;
          return;
        }
        entry.secret = phase === "DELETED" ? undefined : object;
        changed(entry);
      },
      (error: unknown) => restart(entry, error),
    );
    entry.abort = () => request.abort();
  }

  function restart(entry: Entry, error: unknown) {
    if (entry.stopped) return;
    const failed = error !== null && error !== undefined && (error as Error).name !== "TimeoutError";
    if (failed) entry.failures += 1;
    const delay = failed ? Math.min(30_000, 1_000 * 2 ** (entry.failures - 1)) : 0;
    if (failed) {
      options.logger.warn(
        { secret: `${entry.namespace}/${entry.name}`, retryInMs: delay, error: String(error) },
        "watching a referenced Secret failed; retrying",
      );
    }
    clearTimeout(entry.retry);
    entry.retry = setTimeout(() => {
      const resync = entry.resourceVersion ? Promise.resolve() : load(entry).then(() => changed(entry));
      resync.then(() => watch(entry)).catch((next: unknown) => restart(entry, next));
    }, delay);
    entry.retry.unref();
  }

  function drop(webhook: string, key: string) {
    usedBy.get(webhook)?.delete(key);
    const entry = entries.get(key);
    if (!entry) return;
    entry.users.delete(webhook);
    if (entry.users.size > 0) return;
    entry.stopped = true;
    clearTimeout(entry.retry);
    entry.abort?.();
    entries.delete(key);
  }

  function retain(webhook: string, namespace: string, names: string[]) {
    const keep = new Set(names.map((name) => `${namespace}/${name}`));
    for (const key of usedBy.get(webhook) ?? []) if (!keep.has(key)) drop(webhook, key);
    if (usedBy.get(webhook)?.size === 0) usedBy.delete(webhook);
  }

  return {
    async read(webhook, namespace, name) {
      const key = `${namespace}/${name}`;
      let entry = entries.get(key);
      if (!entry) {
        const created: Entry = {
          namespace,
          name,
          users: new Set(),
          secret: undefined,
          resourceVersion: undefined,
          failures: 0,
          stopped: false,
          loaded: Promise.resolve(),
        };
        created.loaded = load(created).then(() => {
          watch(created).catch((error: unknown) => restart(created, error));
        });
        // A failed first read is retried by the next reconcile, not cached.
        created.loaded.catch(() => {
          if (entries.get(key) === created) entries.delete(key);
        });
        entries.set(key, created);
        entry = created;
      }
      entry.users.add(webhook);
      usedBy.set(webhook, (usedBy.get(webhook) ?? new Set()).add(key));
      await entry.loaded;
      return entry.secret;
    },
    retain,
    release: (webhook) => retain(webhook, "", []),
    stop() {
      for (const entry of entries.values()) {
        entry.stopped = true;
        clearTimeout(entry.retry);
        entry.abort?.();
      }
      entries.clear();
      usedBy.clear();
    },
  };
}

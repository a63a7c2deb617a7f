import type { V1Namespace } from "@kubernetes/client-node";
import {
  applyNamespaceSelection,
  deleteNamespaceProject,
  deleteProjectsOfMissingNamespaces,
  ensureNamespaceProject,
  type ProjectRow,
  withdrawNamespaceProject,
} from "../../projects/store.js";
import type { Controller, ControllerManager } from "../manager.js";
import { type NamespaceProjects, namespaceProjects } from "../namespace-projects.js";

/** The namespaces that are projects, as the other controllers read them. */
export interface NamespaceController extends Controller {
  selection: NamespaceProjects;
  /** The namespace's project row, created on first sight and then read from a cache. */
  projectFor(namespace: string): Promise<ProjectRow>;
  /** Called with a namespace's name when it changed (labels, annotations): its objects reconcile again. */
  onChange(listener: (namespace: string) => void): void;
}

/**
 * Projects follow the namespaces the selector picks: created on first sight (projectFor), withdrawn
 * when a namespace stops matching and shown again when it matches again, removed with their namespace.
 * Each complete list mends what changed while no leader ran.
 */
export function setupNamespaceController(manager: ControllerManager): NamespaceController {
  const { pool, core, logger } = manager;
  const listeners: Array<(namespace: string) => void> = [];
  const namespaces = manager.informer<V1Namespace>("namespaces", "/api/v1/namespaces", async () => {
    const list = await core.listNamespace();
    await removeProjectsOfDeletedNamespaces(list.items);
    await withdrawProjectsOfUnselectedNamespaces(list.items);
    return list;
  });
  const selection = namespaceProjects(manager.config.namespaceSelector, (name) =>
    namespaces.informer.get(name),
  );
  // The project row of each namespace, written once and then read from here: concurrent reconciles of
  // one namespace share the first write, and a namespace change (name/repo annotations) drops the entry.
  const projects = new Map<string, Promise<ProjectRow>>();
  const projectFor = (namespace: string): Promise<ProjectRow> => {
    const cached = projects.get(namespace);
    if (cached) return cached;
    // Checked again here: a reconcile that found the namespace selected before an await must not
    // bring back a project withdrawn meanwhile. It fails, and its retry sees the namespace as it is.
    if (!selection.isSelected(namespace))
      return Promise.reject(new Error(`Namespace ${namespace} is no longer selected.`));
    const project = ensureNamespaceProject(pool, selection.describe(namespace));
    projects.set(namespace, project);
    project.catch(() => {
      if (projects.get(namespace) === project) projects.delete(namespace);
    });
    return project;
  };

  // Namespaces deleted while no leader ran take their projects along, after a complete list.
  async function removeProjectsOfDeletedNamespaces(present: V1Namespace[]) {
    const removed = await deleteProjectsOfMissingNamespaces(
      pool,
      present.map((namespace) => namespace.metadata?.name ?? ""),
    ).catch((error: unknown) => {
      logger.warn({ err: error }, "removing projects of deleted namespaces failed; next re-list retries");
      return [];
    });
    for (const slug of removed) projects.delete(slug);
    if (removed.length > 0) logger.info({ projects: removed }, "removed the projects of deleted namespaces");
  }

  // Projects follow the selector both ways, also for a selector or labels changed while no leader ran;
  // each complete list also mends a label change whose own write lost a race with a reconcile.
  async function withdrawProjectsOfUnselectedNamespaces(present: V1Namespace[]) {
    const selected = present.filter((namespace) => selection.matches(namespace));
    const changed = await applyNamespaceSelection(
      pool,
      selected.map((namespace) => namespace.metadata?.name ?? ""),
    ).catch((error: unknown) => {
      logger.warn(
        { err: error },
        "withdrawing projects of unselected namespaces failed; next re-list retries",
      );
      return { withdrawn: [], restored: [] };
    });
    for (const slug of changed.withdrawn) projects.delete(slug);
    if (changed.withdrawn.length + changed.restored.length > 0)
      logger.info(changed, "projects withdrawn and restored to follow the namespace selector");
  }

  namespaces.informer.on("delete", (namespace) => {
    const name = namespace.metadata?.name ?? "";
    // A project write still in flight for this namespace (a reconcile's projectFor, or the "change" that
    // came just before the delete) must land first: run on another connection after our DELETE, its
    // upsert would bring the project back for good (until the next complete list, minutes later).
    const pending = projects.get(name)?.catch(() => undefined);
    projects.delete(name);
    Promise.resolve(pending)
      .then(() => deleteNamespaceProject(pool, name))
      .then(
        (removed) => removed && logger.info({ project: name }, "removed the project of a deleted namespace"),
        (error: unknown) =>
          logger.warn({ err: error, namespace: name }, "removing a deleted namespace's project failed"),
      );
  });
  namespaces.informer.on("change", (namespace) => {
    const name = namespace.metadata?.name ?? "";
    projects.delete(name);
    // A namespace on its way out keeps its project until it is gone (the "delete" handler removes it),
    // and needs no new write of it.
    const leaving = namespace.metadata?.deletionTimestamp !== undefined;
    if (!leaving && selection.isSelected(name)) void projectFor(name).catch(() => {});
    // Still there but no longer selected.
    else if (!leaving && namespaces.informer.get(name))
      withdrawNamespaceProject(pool, name).then(
        (withdrawn) =>
          withdrawn &&
          logger.info({ project: name }, "withdrew the project of a namespace no longer selected"),
        (error: unknown) =>
          logger.warn(
            { err: error, namespace: name },
            "withdrawing an unselected namespace's project failed",
          ),
      );
    for (const listener of listeners) listener(name);
  });

  return {
    selection,
    projectFor,
    onChange: (listener) => listeners.push(listener),
    start: () => namespaces.start(),
    stop: () => namespaces.stop(),
    idle: async () => {},
  };
}

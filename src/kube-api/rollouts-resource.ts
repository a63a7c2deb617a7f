import type { Queryable } from "../db/pool.js";
import type { ReadableResource, WatchCursor } from "./backend.js";
import { uidOf } from "./objects.js";
import { groupVersion } from "./resources.js";
import {
  findRollout,
  listRollouts,
  type RolloutRow,
  rolloutSelectable,
  rolloutsChangedSince,
} from "./rollout-store.js";
import { ageCell } from "./table.js";

const versionOf = (row: RolloutRow) => String(row.updated_at.getTime());
// Rows changed this long before the newest change seen are read again, for commits that landed late.
const lateCommitMs = 10_000;

function rolloutObject(row: RolloutRow) {
  return {
    apiVersion: groupVersion,
    kind: "Rollout",
    metadata: {
      name: String(row.id),
      namespace: row.namespace,
      uid: uidOf("Rollout", row.id),
      resourceVersion: versionOf(row),
      creationTimestamp: row.created_at.toISOString().replace(/\.\d{3}Z$/, "Z"),
      labels: {
        workload: row.name,
        kind: row.workload_kind,
        phase: row.status,
        environment: row.environment,
      },
    },
    spec: {
      workload: {
        kind: row.workload_kind,
        name: row.name,
        ...(row.source_uid ? { uid: row.source_uid } : {}),
      },
      ...(row.revision ? { revision: row.revision } : {}),
      environment: row.environment,
      ...(row.branch ? { branch: row.branch } : {}),
      ...(row.commit_sha ? { commitSha: row.commit_sha } : {}),
      ...(row.url ? { url: row.url } : {}),
    },
    status: {
      phase: row.status,
      ...(row.error_message ? { message: row.error_message } : {}),
      events: row.emitted_events,
      ...(row.started_at ? { startedAt: row.started_at.toISOString() } : {}),
      ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
    },
  };
}

/** `rollouts`: the deployments of the API, named by their id; their version moves with each event. */
export function rolloutsResource(db: Queryable): ReadableResource<RolloutRow> {
  return {
    selectable: rolloutSelectable,
    list: (scope, page) => listRollouts(db, scope, page),
    currentVersion: async () => String(Date.now()),
    find: (namespace, name) =>
      /^\d{1,15}$/.test(name) ? findRollout(db, namespace, Number(name)) : Promise.resolve(undefined),
    watch(scope, resourceVersion) {
      if (resourceVersion && !/^\d{1,15}$/.test(resourceVersion)) return undefined;
      const started = resourceVersion && resourceVersion !== "0" ? Number(resourceVersion) : Date.now();
      const sent = new Map<number, string>();
      let newest = started;
      const cursor: WatchCursor<RolloutRow> = {
        async next() {
          const rows = await rolloutsChangedSince(db, scope, new Date(newest - lateCommitMs));
          const changes: { type: "ADDED" | "MODIFIED"; row: RolloutRow }[] = [];
          for (const row of rows) {
            const version = versionOf(row);
            if (row.updated_at.getTime() <= started || sent.get(row.id) === version) continue;
            changes.push({
              type: sent.has(row.id) || row.created_at.getTime() <= started ? "MODIFIED" : "ADDED",
              row,
            });
            sent.set(row.id, version);
            newest = Math.max(newest, row.updated_at.getTime());
          }
          return changes;
        },
      };
      return Promise.resolve(cursor);
    },
    positionOf: (row) => ({ createdAt: row.created_at, id: row.id }),
    toObject: rolloutObject,
    table: {
      columns: [
        { name: "Name", type: "string", format: "name", description: "The rollout's id" },
        { name: "Workload", type: "string", description: "The Deployment, StatefulSet or DaemonSet" },
        { name: "Revision", type: "string", description: "The workload's revision" },
        { name: "Environment", type: "string", description: "From the workload's annotations" },
        { name: "Phase", type: "string", description: "pending, ready, succeeded, failed or cancelled" },
        { name: "Events", type: "string", description: "The deployment.* events it emitted" },
        { name: "Age", type: "date", description: "Since the rollout was first seen" },
        { name: "Kind", type: "string", priority: 1, description: "The workload's kind" },
      ],
      cells: (row, now) => [
        String(row.id),
        row.name,
        row.revision ?? "<none>",
        row.environment,
        row.status,
        row.emitted_events.map((event) => event.replace(/^deployment\./, "")).join(","),
        ageCell(row.created_at, now),
        row.workload_kind,
      ],
      metadata: (row) => rolloutObject(row).metadata,
    },
  };
}

import type { Requirement, Selectable } from "./selectors.js";
import type { TableShape } from "./table.js";

/** Where a list or watch looks: one namespace (undefined: all) and the selectors' requirements. */
export interface Scope {
  namespace: string | undefined;
  requirements: Requirement[];
}

/** A position in a list: the last row of the previous page, by its sort key. */
export interface Position {
  createdAt: Date;
  id: number;
}

/** Turns of a watch: each gives what changed since the previous one, with the event type. */
export interface WatchCursor<Row> {
  next(): Promise<{ type: "ADDED" | "MODIFIED"; row: Row }[]>;
}

/**
 * What the list, get and watch handlers need of a readable resource (deliveries, rollouts): its
 * queries, its object and Table shapes, and what it can be selected by.
 */
export interface ReadableResource<Row> {
  selectable: { labels: Selectable; fields: Selectable };
  /** Up to `limit + 1` rows below `after`, newest first. */
  list(scope: Scope, page: { limit: number; after: Position | undefined }): Promise<Row[]>;
  /** The list's resourceVersion: where a watch started from it begins. */
  currentVersion(): Promise<string>;
  find(namespace: string, name: string): Promise<Row | undefined>;
  /** Undefined when `resourceVersion` is not one of this resource's versions (a 400). */
  watch(scope: Scope, resourceVersion: string | undefined): Promise<WatchCursor<Row>> | undefined;
  positionOf(row: Row): Position;
  toObject(row: Row): { metadata: object };
  table: TableShape<Row>;
}

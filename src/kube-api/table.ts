import { humanAge } from "./age.js";

// The Table format (meta.k8s.io/v1 Table) is what `kubectl get` asks for and prints as columns. The
// columns are the server's to choose; kubectl shows the cells as they come.

export interface Column {
  name: string;
  type: "string" | "integer" | "date";
  description: string;
  /** 0: always shown; 1: only with `-o wide`. */
  priority?: number;
  format?: "name";
}

export interface TableShape<T> {
  columns: Column[];
  cells(item: T, now: number): (string | number)[];
  /** The object's metadata, which kubectl reads for `--show-labels` and to tell rows apart. */
  metadata(item: T): object;
}

/** The `Accept` of a request asking for a Table, and the version of it asked for (kubectl asks v1, then v1beta1). */
export function tableVersionAsked(accept: string | undefined): "v1" | "v1beta1" | undefined {
  for (const part of (accept ?? "").split(",")) {
    const parameters = part.split(";").map((piece) => piece.trim());
    if (!parameters.includes("as=Table") || !parameters.includes("g=meta.k8s.io")) continue;
    if (parameters.includes("v=v1")) return "v1";
    if (parameters.includes("v=v1beta1")) return "v1beta1";
  }
  return undefined;
}

export function toTable<T>(
  shape: TableShape<T>,
  items: T[],
  tableVersion: "v1" | "v1beta1",
  listMeta: { resourceVersion?: string; continue?: string },
) {
  const now = Date.now();
  return {
    kind: "Table",
    apiVersion: `meta.k8s.io/${tableVersion}`,
    metadata: listMeta,
    columnDefinitions: shape.columns.map((column) => ({
      name: column.name,
      type: column.type === "date" ? "string" : column.type,
      format: column.format ?? "",
      description: column.description,
      priority: column.priority ?? 0,
    })),
    rows: items.map((item) => ({
      cells: shape.cells(item, now),
      object: {
        kind: "PartialObjectMetadata",
        apiVersion: `meta.k8s.io/${tableVersion}`,
        metadata: shape.metadata(item),
      },
    })),
  };
}

export const ageCell = (date: Date, now: number) => humanAge(date, now);

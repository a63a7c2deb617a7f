import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../logger.js";
import type { ReadableResource } from "./backend.js";
import { groupVersion, type ResourceInfo } from "./resources.js";
import { parseSelectors } from "./selectors.js";
import { KubeStatusError } from "./status.js";
import { tableVersionAsked, toTable } from "./table.js";
import { streamWatch } from "./watch-stream.js";

export interface ReadRequest {
  request: IncomingMessage;
  response: ServerResponse;
  query: URLSearchParams;
  namespace: string | undefined;
  info: ResourceInfo;
}

/** Without `limit` a list still pages (kube-apiserver may too): kubectl follows `continue`. */
const defaultLimit = 500;
const maxLimit = 5_000;
// A continue token: the list's resourceVersion, then the last row's sort key (`<ms>-<id>`).
const continueShape = /^(\d{1,15})\.(\d{1,15})-(\d{1,15})$/;

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}

function limitOf(query: URLSearchParams): number {
  const text = query.get("limit");
  if (text === null || text === "" || text === "0") return defaultLimit;
  if (!/^\d{1,9}$/.test(text))
    throw new KubeStatusError("BadRequest", `limit must be a whole number, not "${text}"`);
  return Math.min(Number(text), maxLimit);
}

export async function listOrWatch<Row>(resource: ReadableResource<Row>, read: ReadRequest, logger: Logger) {
  const { query, response, namespace, info } = read;
  const scope = { namespace, requirements: parseSelectors(query, resource.selectable) };
  const tableVersion = tableVersionAsked(read.request.headers.accept);
  if (query.get("watch") === "true" || query.get("watch") === "1") {
    const cursor = resource.watch(scope, query.get("resourceVersion") ?? undefined);
    if (!cursor)
      throw new KubeStatusError(
        "BadRequest",
        `resourceVersion "${query.get("resourceVersion")}" is not valid for ${info.name}`,
      );
    const timeout = Number(query.get("timeoutSeconds") ?? "0");
    await streamWatch(response, await cursor, {
      toObject: (row) =>
        tableVersion ? toTable(resource.table, [row], tableVersion, {}) : resource.toObject(row),
      timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : undefined,
      logger,
    });
    return;
  }
  const limit = limitOf(query);
  const token = query.get("continue");
  const continued = token ? continueShape.exec(token) : undefined;
  if (token && !continued)
    throw new KubeStatusError("BadRequest", "the continue token is not valid; list again without it");
  const resourceVersion = continued?.[1] ?? (await resource.currentVersion());
  const after = continued
    ? { createdAt: new Date(Number(continued[2])), id: Number(continued[3]) }
    : undefined;
  const rows = await resource.list(scope, { limit, after });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const listMeta: { resourceVersion: string; continue?: string } = { resourceVersion };
  if (rows.length > limit && last) {
    const position = resource.positionOf(last);
    listMeta.continue = `${resourceVersion}.${position.createdAt.getTime()}-${position.id}`;
  }
  if (tableVersion) {
    sendJson(response, 200, toTable(resource.table, page, tableVersion, listMeta));
    return;
  }
  sendJson(response, 200, {
    apiVersion: groupVersion,
    kind: `${info.kind}List`,
    metadata: listMeta,
    items: page.map((row) => ({ apiVersion: groupVersion, kind: info.kind, ...resource.toObject(row) })),
  });
}

export async function getOne<Row>(resource: ReadableResource<Row>, read: ReadRequest, name: string) {
  const row = read.namespace ? await resource.find(read.namespace, name) : undefined;
  if (!row) {
    throw new KubeStatusError(
      "NotFound",
      `${read.info.name}.${groupVersion.split("/")[0]} "${name}" not found`,
      {
        name,
        group: groupVersion.split("/")[0],
        kind: read.info.name,
      },
    );
  }
  const tableVersion = tableVersionAsked(read.request.headers.accept);
  sendJson(
    read.response,
    200,
    tableVersion ? toTable(resource.table, [row], tableVersion, {}) : resource.toObject(row),
  );
}

// FAKE Kubernetes API server for tests: the HTTP surface (REST paths, list/watch, write verbs, discovery).
import type { IncomingMessage, ServerResponse } from "node:http";
import { discovery } from "./discovery.js";
import { badRequest, expired, KubeStatusError, methodNotAllowed, pathNotFound } from "./errors.js";
import { isObject, type KubeObject } from "./json.js";
import { apiVersionOf, type ResourceType } from "./resources.js";
import { parseFieldSelector, parseLabelSelector } from "./selectors.js";
import type { FakeKubeStore, StoredEvent, Subresource, WatchEventType } from "./store.js";

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType?: string;
  watch: boolean;
  /** HTTP status answered (200 for a watch that was opened). */
  status?: number;
}

export interface FailureRule {
  method?: string;
  /** Exact path (no query) or a RegExp tested against it. */
  path?: string | RegExp;
  /** Only watch requests (true) or only non-watch requests (false). */
  watch?: boolean;
  code: number;
  reason?: string;
  message?: string;
  /** How many matching requests fail; default 1. */
  times?: number;
}

export interface OpenWatch {
  path: string;
  query: Record<string, string>;
  resource: ResourceType;
  /** The resourceVersion the client has seen last on this watch (its start, then each event's). */
  lastResourceVersion: string;
  send(type: WatchEventType | "ERROR" | "BOOKMARK", object: unknown): void;
  end(): void;
  destroy(): void;
}

export interface HttpOptions {
  expiredWatchResponse: "error-event" | "http-410";
}

interface Route {
  type: ResourceType;
  namespace?: string;
  name?: string;
  sub: Subresource;
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Items of typed (built-in) lists carry no kind/apiVersion on the wire; custom resource items do. */
function listItem(type: ResourceType, obj: KubeObject): KubeObject {
  if (type.custom) return obj;
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`the request body is not valid JSON: ${text.slice(0, 80)}`);
  }
}

export class FakeKubeHttp {
  readonly requests: RecordedRequest[] = [];
  readonly watches = new Set<OpenWatch>();
  private readonly failures: FailureRule[] = [];
  private readonly continueTokens = new Map<
    string,
    { items: KubeObject[]; rv: number; resource: ResourceType }
  >();
  private tokenSeq = 0;

  constructor(
    private readonly store: FakeKubeStore,
    private readonly options: HttpOptions,
  ) {}

  injectFailure(rule: FailureRule): void {
    this.failures.push({ times: 1, ...rule });
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://fake");
    const query = Object.fromEntries(url.searchParams.entries());
    const watch = req.method === "GET" && (query.watch === "true" || query.watch === "1");
    const record: RecordedRequest = { method: req.method ?? "", path: url.pathname, query, watch };
    const contentType = req.headers["content-type"];
    if (contentType) record.contentType = contentType;
    this.requests.push(record);
    res.on("finish", () => {
      record.status ??= res.statusCode;
    });
    this.dispatch(req, res, url.pathname, query, watch, record).catch((err: unknown) => {
      const error =
        err instanceof KubeStatusError
          ? err
          : new KubeStatusError(500, "InternalError", `Internal error occurred: ${String(err)}`);
      if (!res.headersSent) sendJson(res, error.code, error.toStatus());
      else res.end();
    });
  }

  private injected(method: string, path: string, watch: boolean): KubeStatusError | undefined {
    const rule = this.failures.find(
      (r) =>
        (r.times ?? 1) > 0 &&
        (!r.method || r.method.toUpperCase() === method) &&
        (r.watch === undefined || r.watch === watch) &&
        (!r.path || (typeof r.path === "string" ? r.path === path : r.path.test(path))),
    );
    if (!rule) return undefined;
    rule.times = (rule.times ?? 1) - 1;
    const reason =
      rule.reason ??
      (rule.code >= 500 ? "InternalError" : rule.code === 429 ? "TooManyRequests" : "BadRequest");
    return new KubeStatusError(
      rule.code,
      reason,
      rule.message ?? `FAKE kube-apiserver: injected ${rule.code}`,
    );
  }

  private route(path: string): Route | "discovery" {
    const seg = path.split("/").filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (seg[0] === "api" && seg[1] === "v1") [group, version, rest] = ["", "v1", seg.slice(2)];
    else if (seg[0] === "apis" && seg.length >= 3)
      [group, version, rest] = [seg[1] ?? "", seg[2] ?? "", seg.slice(3)];
    else return "discovery";
    if (rest.length === 0) return "discovery";
    let namespace: string | undefined;
    if (
      rest[0] === "namespaces" &&
      rest.length >= 3 &&
      !(group === "" && ["status", "finalize"].includes(rest[2] ?? ""))
    ) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural = "", name, sub, extra] = rest;
    const type = this.store.findByPath(group, version, plural);
    if (!type || extra !== undefined || (sub !== undefined && sub !== "status")) throw pathNotFound();
    if (
      (namespace !== undefined && !type.namespaced) ||
      (type.namespaced && name !== undefined && namespace === undefined)
    ) {
      throw pathNotFound();
    }
    if (sub === "status" && !type.statusSubresource) throw pathNotFound();
    const route: Route = { type, sub: sub as Subresource };
    if (namespace !== undefined) route.namespace = namespace;
    if (name !== undefined) route.name = name;
    return route;
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: Record<string, string>,
    watch: boolean,
    record: RecordedRequest,
  ): Promise<void> {
    const method = req.method ?? "GET";
    const failure = this.injected(method, path, watch);
    if (failure) throw failure;
    const route = this.route(path);
    if (route === "discovery") {
      if (method !== "GET") throw methodNotAllowed();
      return sendJson(res, 200, discovery(this.store.allTypes(), path));
    }
    const { type, namespace, name, sub } = route;
    const dryRun = query.dryRun === "All";
    if (name === undefined) {
      if (method === "GET" && watch) return this.watch(req, res, route, query, record);
      if (method === "GET") return sendJson(res, 200, this.list(route, query));
      if (method === "POST") {
        if (type.namespaced && namespace === undefined) throw methodNotAllowed();
        const created = this.store.create(type, namespace, await readBody(req), { dryRun });
        return sendJson(res, 201, created);
      }
      throw methodNotAllowed();
    }
    switch (method) {
      case "GET":
        return sendJson(res, 200, this.store.get(type, namespace, name));
      case "PUT":
        return sendJson(
          res,
          200,
          this.store.update(type, namespace, name, await readBody(req), sub, { dryRun }),
        );
      case "PATCH":
        return sendJson(
          res,
          200,
          this.store.patch(
            type,
            namespace,
            name,
            req.headers["content-type"] ?? "",
            await readBody(req),
            sub,
            {
              dryRun,
            },
          ),
        );
      case "DELETE": {
        if (sub) throw methodNotAllowed();
        const body = await readBody(req);
        const preconditions = isObject(body) && isObject(body.preconditions) ? body.preconditions : {};
        const options: Parameters<FakeKubeStore["delete"]>[3] = { dryRun };
        options.preconditions = {};
        if (typeof preconditions.uid === "string") options.preconditions.uid = preconditions.uid;
        if (typeof preconditions.resourceVersion === "string") {
          options.preconditions.resourceVersion = preconditions.resourceVersion;
        }
        return sendJson(res, 200, this.store.delete(type, namespace, name, options));
      }
      default:
        throw methodNotAllowed();
    }
  }

  private matcher(route: Route, query: Record<string, string>): (obj: KubeObject) => boolean {
    const labels = parseLabelSelector(query.labelSelector);
    const fields = parseFieldSelector(query.fieldSelector, route.type.fieldLabels);
    return (obj) =>
      (route.namespace === undefined || obj.metadata?.namespace === route.namespace) &&
      labels.matches(obj) &&
      fields.matches(obj);
  }

  private list(route: Route, query: Record<string, string>): unknown {
    const { type } = route;
    let items: KubeObject[];
    let rv: number;
    if (query.continue) {
      const saved = this.continueTokens.get(query.continue);
      if (!saved || saved.resource !== type) throw badRequest("continue key is not valid");
      if (this.store.isTooOld(saved.rv)) {
        throw expired(
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        );
      }
      this.continueTokens.delete(query.continue);
      items = saved.items;
      rv = saved.rv;
    } else {
      const matches = this.matcher(route, query);
      const listed = this.store.list(type, route.namespace);
      items = listed.items.filter(matches);
      rv = Number(listed.resourceVersion);
    }
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    const limit = Number(query.limit ?? 0);
    if (Number.isInteger(limit) && limit > 0 && items.length > limit) {
      const token = Buffer.from(JSON.stringify({ rv, seq: ++this.tokenSeq })).toString("base64url");
      this.continueTokens.set(token, { items: items.slice(limit), rv, resource: type });
      metadata.continue = token;
      metadata.remainingItemCount = items.length - limit;
      items = items.slice(0, limit);
    }
    return {
      kind: type.listKind,
      apiVersion: apiVersionOf(type),
      metadata,
      items: items.map((obj) => listItem(type, obj)),
    };
  }

  private watch(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    query: Record<string, string>,
    record: RecordedRequest,
  ): void {
    const { type } = route;
    const matches = this.matcher(route, query);
    const from = query.resourceVersion ?? "";
    let replay: StoredEvent[] = [];
    let initial: KubeObject[] = [];
    let tooOld: KubeStatusError | undefined;
    if (from === "" || from === "0") {
      initial = this.store.list(type, route.namespace).items.filter(matches);
    } else {
      const n = Number(from);
      if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid resource version: ${from}`);
      try {
        replay = this.store.eventsSince(type, n);
      } catch (err) {
        if (!(err instanceof KubeStatusError) || err.code !== 410) throw err;
        tooOld = err;
      }
    }
    if (tooOld && this.options.expiredWatchResponse === "http-410") {
      sendJson(res, 410, tooOld.toStatus());
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" });
    res.flushHeaders();
    record.status = 200;
    let lastResourceVersion = from === "" || from === "0" ? this.store.resourceVersion() : from;
    const write = (eventType: string, object: unknown) => {
      if (res.writableEnded || res.destroyed) return;
      const rv = isObject(object) && isObject(object.metadata) ? object.metadata.resourceVersion : undefined;
      if (typeof rv === "string") lastResourceVersion = rv;
      res.write(`${JSON.stringify({ type: eventType, object })}\n`);
    };
    if (tooOld) {
      // What the real watch cache does: HTTP 200, one ERROR event carrying a 410 Expired Status, end of stream.
      write("ERROR", tooOld.toStatus());
      res.end();
      return;
    }
    const deliver = (event: StoredEvent) => {
      const now = matches(event.object);
      const before = event.type === "MODIFIED" && event.previous ? matches(event.previous) : now;
      if (event.type === "MODIFIED" && before !== now) write(now ? "ADDED" : "DELETED", event.object);
      else if (now) write(event.type, event.object);
    };
    for (const obj of initial) write("ADDED", obj);
    for (const event of replay) deliver(event);
    const unsubscribe = this.store.subscribe((event) => {
      if (event.resource === type) deliver(event);
    });
    const watch: OpenWatch = {
      path: req.url ?? "",
      query,
      resource: type,
      get lastResourceVersion() {
        return lastResourceVersion;
      },
      send: write,
      end: () => res.end(),
      destroy: () => req.socket.destroy(),
    };
    this.watches.add(watch);
    const timeout = Number(query.timeoutSeconds ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    const cleanup = () => {
      unsubscribe();
      this.watches.delete(watch);
      if (timer) clearTimeout(timer);
    };
    res.on("close", cleanup);
    req.on("close", cleanup);
  }
}

import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { Request, Response, Router } from "express";
import { ZodError, type z } from "zod";
import { BadRequestError, MethodNotAllowedError } from "../errors.js";
import type { AuthContext } from "./auth-context.js";
import { malformedJson, validationErrorFrom } from "./error-handler.js";
import { errorResponseSchema } from "./openapi.js";

type Method = "get" | "post" | "put" | "delete";
type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  auth: AuthContext;
  req: Request;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  /** Response headers besides Content-Type, e.g. a Link to the next page. */
  headers?: Record<string, string>;
}

export interface RouteDefinition<PS extends AnyObject, QS extends AnyObject, BS extends z.ZodType> {
  method: Method;
  /** OpenAPI form, relative to /api: `/projects/{project_id}/webhooks`. */
  path: string;
  /** Unique and stable: generated clients name their methods after it. */
  operationId: string;
  /** One line. */
  summary: string;
  /** The rules in full, in the API's own words: defaults, bounds, what each status means. */
  description: string;
  tag: string;
  params?: PS;
  query?: QS;
  body?: BS;
  /** The body may be left out (no bytes, whatever the Content-Type): it is then read as `{}`. */
  bodyOptional?: boolean;
  /** Error statuses default to the Error schema; 400, 401 and 404 are added to every route. */
  responses: Record<number, ResponseDefinition>;
  handler: (input: RouteInput<z.output<PS>, z.output<QS>, z.output<BS>>) => Promise<RouteResult>;
}

export interface ResponseDefinition {
  description: string;
  schema?: z.ZodType;
  /** Response headers worth documenting, e.g. Link; a string unless a schema says more. */
  headers?: Record<string, { description: string; schema?: Record<string, unknown> }>;
}

// Every authenticated route can answer these; routes add their own.
const commonErrors: Record<number | "default", ResponseDefinition> = {
  400: { description: "Invalid input" },
  401: { description: "Missing or invalid API key" },
  429: {
    description:
      "Too many refused credentials from this address this minute; try again after Retry-After seconds",
    headers: { "Retry-After": { description: "Seconds until the address may authenticate again" } },
  },
  404: { description: "Unknown id, or an id of another project" },
  500: { description: "An unexpected failure; the service's log holds its details" },
  503: {
    description: "The service cannot answer now (its database or the Kubernetes API unreachable); retry",
  },
  default: { description: "Any other failure, in the same shape" },
};

// Only an operation that reads a body can be sent one too large.
const bodyErrors: Record<number, ResponseDefinition> = {
  413: { description: "The request body is larger than the service accepts" },
};

// The methods each path of a router answers, for refuseOtherMethods.
const methodsByPath = new WeakMap<Router, Map<string, string[]>>();

/**
 * Answers any other method on a known path with 405 and an Allow header (OPTIONS: 204 with Allow).
 * Called once every route of the router is added: express matches in order, so these come last.
 */
export function refuseOtherMethods(router: Router): void {
  for (const [path, methods] of methodsByPath.get(router) ?? []) {
    const allow = methods.join(", ");
    router.all(path, (req: Request, res: Response) => {
      if (req.method === "OPTIONS") {
        res.set("Allow", allow).status(204).end();
        return;
      }
      throw new MethodNotAllowedError(
        `${req.method} is not allowed on /api${req.path}; use ${allow}.`,
        allow,
      );
    });
  }
}

function parse<S extends z.ZodType>(schema: S | undefined, value: unknown, where: string): z.output<S> {
  if (!schema) return undefined as z.output<S>;
  const result = schema.safeParse(value);
  if (!result.success) throw validationErrorFrom(result.error, where);
  return result.data;
}

/**
 * A request that sent no bytes, whatever its Content-Type says (`curl -X POST -H 'Content-Type:
 * application/json'` sends neither a length nor a body): an optional body left out. A body that is sent
 * must still be JSON.
 */
const bodyless = (req: Request) =>
  req.headers["transfer-encoding"] === undefined && Number(req.headers["content-length"] ?? 0) === 0;

/**
 * A query parameter the operation does not list is a 400 naming it, not ignored: `?page=2` on a cursor
 * list, or a misspelt `per-page`, would otherwise answer the first page as if it had been read.
 */
function refuseUnknownQuery(schema: AnyObject | undefined, query: unknown): void {
  const known = schema ? Object.keys(schema.shape) : [];
  const unknown = Object.keys(query ?? {}).filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  const takes = known.length === 0 ? "this operation takes none" : `this operation takes ${known.join(", ")}`;
  const issues = unknown.map((name) => ({
    code: "custom" as const,
    path: [name],
    message: `unknown query parameter; ${takes}`,
    input: undefined,
  }));
  throw validationErrorFrom(new ZodError(issues), "query");
}

/**
 * Declares one endpoint once: the same zod schemas validate the request at run time and describe it
 * in the OpenAPI document, so the two cannot drift.
 */
export function addRoute<PS extends AnyObject, QS extends AnyObject, BS extends z.ZodType>(
  router: Router,
  registry: OpenAPIRegistry,
  route: RouteDefinition<PS, QS, BS>,
): void {
  const responses: RouteConfig["responses"] = {};
  for (const [status, { description, schema, headers }] of Object.entries({
    ...commonErrors,
    ...(route.body ? bodyErrors : {}),
    ...route.responses,
  })) {
    const error = status === "default" || Number(status) >= 400;
    const content = schema ?? (error ? errorResponseSchema : undefined);
    responses[status] = {
      description,
      ...(content ? { content: { "application/json": { schema: content } } } : {}),
      ...(headers
        ? {
            headers: Object.fromEntries(
              Object.entries(headers).map(([n, { schema, ...h }]) => [
                n,
                { ...h, schema: schema ?? { type: "string" } },
              ]),
            ),
          }
        : {}),
    };
  }
  registry.registerPath({
    method: route.method,
    // The document's server is the service's root (openapi.ts), so its paths spell out /api.
    path: `/api${route.path}`,
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: [route.tag],
    request: {
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { query: route.query } : {}),
      ...(route.body
        ? { body: { required: !route.bodyOptional, content: { "application/json": { schema: route.body } } } }
        : {}),
    },
    responses,
  });

  const expressPath = route.path.replace(/\{(\w+)\}/g, ":$1");
  const methods = methodsByPath.get(router) ?? new Map<string, string[]>();
  methodsByPath.set(router, methods);
  methods.set(expressPath, [...(methods.get(expressPath) ?? []), route.method.toUpperCase()]);
  router[route.method](expressPath, async (req: Request, res: Response) => {
    const params = parse(route.params, req.params, "path");
    refuseUnknownQuery(route.query, req.query);
    const query = parse(route.query, req.query, "query");
    if (route.body && req.body === undefined && !(route.bodyOptional && bodyless(req))) {
      throw new BadRequestError("Request body must be JSON sent with Content-Type: application/json.");
    }
    // JSON null is a body left out where it may be (generated clients send it for "no body").
    if (route.body && req.body === null && !route.bodyOptional) throw malformedJson();
    const body = parse(route.body, req.body ?? {}, "body");
    const result = await route.handler({ params, query, body, auth: res.locals.auth as AuthContext, req });
    if (result.headers) res.set(result.headers);
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
  });
}

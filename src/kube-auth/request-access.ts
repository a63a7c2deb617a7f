import type { WebhookAccess } from "../http/auth-context.js";

/**
 * The RBAC verb (and subresource) an /api request needs on `webhooks.webhook-operator.io` in the
 * project's namespace. The README's table (Cluster tooling calls /api with its ServiceAccount token)
 * documents the same mapping.
 * `path` is relative to /api, e.g. /projects/3/webhooks/5/deliveries/7/retry.
 */
export function requiredAccess(method: string, path: string): Omit<WebhookAccess, "namespace"> {
  const segments = path.split("/").filter(Boolean);
  const last = segments.at(-1) ?? "";
  // Recovering failures replays them in bulk: the same permission.
  if (method === "POST" && (last === "retry" || last === "recover"))
    return { verb: "create", subresource: "replay" };
  if (method === "POST" && last === "test") return { verb: "create", subresource: "test" };
  switch (method) {
    case "GET":
    case "HEAD":
      // A path ending in an id names one thing; anything else is a collection.
      return { verb: /^\d+$/.test(last) ? "get" : "list" };
    case "POST":
      return { verb: "create" };
    case "PUT":
    case "PATCH":
      return { verb: "update" };
    case "DELETE":
      return { verb: "delete" };
    default:
      return { verb: method.toLowerCase() };
  }
}

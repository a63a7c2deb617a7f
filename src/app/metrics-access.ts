import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { UnauthorizedError } from "../errors.js";

// METRICS_TOKEN guards /metrics apart from /api: a Prometheus holds this one token (the chart's
// ServiceMonitor reads it from a Secret), never an API key that could change webhooks.

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Lets a request through only with `Authorization: Bearer <token>`. Both sides are hashed first, so
 * the comparison takes the same time whatever the length or the first wrong byte of what was sent.
 */
export function requireMetricsToken(token: string): RequestHandler {
  const expected = digest(token);
  return (req, res, next) => {
    const [scheme, credential = ""] = (req.get("authorization") ?? "").split(" ", 2);
    const given = digest(scheme?.toLowerCase() === "bearer" ? credential : "");
    if (!timingSafeEqual(given, expected)) {
      res.set("WWW-Authenticate", 'Bearer realm="metrics"');
      throw new UnauthorizedError("/metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>.");
    }
    next();
  };
}

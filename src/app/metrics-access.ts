import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import type { AuthPacer } from "../api-keys/auth-pacing.js";
import { UnauthorizedError } from "../errors.js";

// METRICS_TOKEN guards /metrics apart from /api: a Prometheus holds this one token (the chart's
// ServiceMonitor reads it from a Secret), never an API key that could change webhooks. Wrong tokens
// are paced like refused API keys, by the same pacer: a source's failures count together.

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Lets a request through only with `Authorization: Bearer <token>`. Both sides are hashed first, so
 * the comparison takes the same time whatever the length or the first wrong byte of what was sent.
 * The right token always passes; a wrong one from a paced source is answered 429 with Retry-After.
 */
export function requireMetricsToken(token: string, pacer?: AuthPacer): RequestHandler {
  const expected = digest(token);
  return (req, res, next) => {
    const [scheme, credential = ""] = (req.get("authorization") ?? "").split(" ", 2);
    const given = digest(scheme?.toLowerCase() === "bearer" ? credential : "");
    if (!timingSafeEqual(given, expected)) {
      const paced = pacer?.refusal(req.ip);
      const refused = new UnauthorizedError(
        "/metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>.",
      );
      pacer?.failed(req.ip, refused.message);
      if (paced) throw paced;
      res.set("WWW-Authenticate", 'Bearer realm="metrics"');
      throw refused;
    }
    next();
  };
}

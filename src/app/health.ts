import type { Router } from "express";
import type { DatabaseReadiness } from "../db/readiness.js";

/**
 * /healthz: the process serves requests. /readyz: and the database answers, within the readiness
 * bound (DATABASE_READY_TIMEOUT_MS; the check, db/readiness.ts, leaves nothing waiting behind it).
 */
export function registerHealthRoutes(router: Router, databaseReady: DatabaseReadiness): void {
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    if (await databaseReady()) res.json({ status: "ready" });
    else res.status(503).json({ status: "not ready", reason: "database unreachable" });
  });
}

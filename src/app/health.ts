import type { Router } from "express";
import type { DatabaseReadiness } from "../db/readiness.js";

/**
 * /healthz: the process serves requests. /readyz: and the database answers, within the readiness
 * bound (DATABASE_READY_TIMEOUT_MS; the check, db/readiness.ts, leaves nothing waiting behind it), and
 * the delivery worker has lost no slot: a send open past twice the longest a send can take is one
 * whose end never gave its slot back, and a worker that loses them all claims nothing, however much
 * is due. Not ready, the replica shows as such (kubectl get pods) instead of looking healthy while
 * nothing is sent; a restart gives the slots back.
 */
export function registerHealthRoutes(
  router: Router,
  databaseReady: DatabaseReadiness,
  stuckSends: () => number,
): void {
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const stuck = stuckSends();
    if (stuck > 0)
      res
        .status(503)
        .json({ status: "not ready", reason: `delivery worker stuck: ${stuck} sends hold slots` });
    else if (await databaseReady()) res.json({ status: "ready" });
    else res.status(503).json({ status: "not ready", reason: "database unreachable" });
  });
}

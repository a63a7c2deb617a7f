import type { Router } from "express";
import type { Pool } from "../db/pool.js";

/** /healthz: the process serves requests. /readyz: and the database answers (within 2 s). */
export function registerHealthRoutes(router: Router, pool: Pool): void {
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    try {
      await Promise.race([
        pool.query("SELECT 1"),
        new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), 2_000).unref()),
      ]);
      res.json({ status: "ready" });
    } catch {
      res.status(503).json({ status: "not ready", reason: "database unreachable" });
    }
  });
}

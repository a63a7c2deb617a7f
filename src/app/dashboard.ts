import { existsSync } from "node:fs";
import path from "node:path";
import express, { type Router } from "express";
import { NotFoundError } from "../errors.js";
import type { Logger } from "../logger.js";
import { packageRoot } from "../package-root.js";

// The dashboard is a built single-page app (dashboard/ → dist/dashboard by `npm run build`), served by
// the API's own process and origin, so it needs no CORS and no second Service.

/**
 * The build output, dist/dashboard under the package's root, however the server runs (bundled, from
 * tsc's modules, or from source with tsx and in tests): never the Vite source folder dashboard/.
 */
const builtDir = packageRoot === undefined ? undefined : path.join(packageRoot, "dist", "dashboard");

export function findDashboardDir(): string | undefined {
  return builtDir !== undefined && existsSync(path.join(builtDir, "index.html")) ? builtDir : undefined;
}

/**
 * No inline script or style element anywhere (the build emits none), nothing from another origin (a
 * cluster may have no internet), and no framing. Inline style *attributes* are not used either.
 */
export const dashboardCsp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const pageHeaders = {
  "Content-Security-Policy": dashboardCsp,
  // The page names the current hashed assets, so it is revalidated every time; the assets never change.
  "Cache-Control": "no-cache",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

/**
 * Serves /assets/* (content-hashed names: cached a year, immutable) and answers every other GET that
 * is not /api, /metrics or a health check with index.html, so deep links survive a reload.
 */
export function dashboardRouter(dir: string): Router {
  const router = express.Router();
  router.use(
    "/assets",
    express.static(`${dir}/assets`, {
      immutable: true,
      maxAge: "365d",
      index: false,
      setHeaders: (res) => res.set("X-Content-Type-Options", "nosniff"),
    }),
  );
  // An asset of an older build (a page open across an upgrade): a plain 404, never the page.
  router.use("/assets", (req) => {
    throw new NotFoundError(`No dashboard asset ${req.path}; reload the page.`);
  });
  router.get("/favicon.svg", (_req, res) => {
    res.set({ "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff" });
    res.sendFile(`${dir}/favicon.svg`);
  });
  router.get(/^\/(?!api(\/|$)).*/, (req, res, next) => {
    if (!req.accepts("html")) return next();
    res.set(pageHeaders);
    res.sendFile(`${dir}/index.html`);
  });
  return router;
}

/** The dashboard's routes, or none (with a log line that says why) when it is off or not built. */
export function dashboardRoutes(enabled: boolean, logger: Logger): Router | undefined {
  if (!enabled) return undefined;
  const dir = findDashboardDir();
  if (!dir) {
    logger.warn("dashboard not built (no dist/dashboard/index.html): run `npm run build`; serving /api only");
    return undefined;
  }
  return dashboardRouter(dir);
}

import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { boundConnections, boundedServerOptions } from "../http/connection-bounds.js";
import type { Logger } from "../logger.js";
import { version } from "../version.js";
import type { Config } from "./config.js";
import { findDashboardDir } from "./dashboard.js";

// Required, not imported: `import … from "node:http"` builds Node's ES module view of http, which reads
// every export, the lazy WebSocket and MessageEvent among them, and so loads Node's bundled undici
// (fetch, WebSocket: about 70 internal modules, 10 MiB resident) that the service never uses.
const { createServer } = createRequire(import.meta.url)("node:http") as typeof import("node:http");

async function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

/** The HTTP server on its bounds, listening; says once where, and where to open the dashboard. */
export async function listenAndAnnounce(
  config: Config,
  app: Express,
  embeddedDatabase: boolean,
  logger: Logger,
): Promise<{ server: Server; url: string }> {
  const { bounds } = config.http;
  const server = createServer(boundedServerOptions(bounds), app);
  boundConnections(server, bounds, logger);
  const address = await listen(server, config.http.host, config.http.port);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
  // Where it listens, and addresses to open: on 0.0.0.0 that is loopback, not "0.0.0.0".
  const listenOn = `${host}:${address.port}`;
  const dashboard = !config.dashboard.enabled
    ? "dashboard off (DASHBOARD_ENABLED=false)"
    : findDashboardDir()
      ? `dashboard ${url}/`
      : "dashboard not built (npm run build)";
  logger.info(
    { listen: listenOn, url, version, database: embeddedDatabase ? "embedded" : "DATABASE_URL" },
    `webhook-operator ${version} listening on ${host === "0.0.0.0" || host === "[::]" ? `all interfaces, port ${address.port}` : listenOn}: ${dashboard}, API description ${url}/api/docs`,
  );

  return { server, url };
}

import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { registerHealthRoutes } from "../../src/app/health.js";

// /readyz answers 503 while the delivery worker has a send holding its slot past the longest a send can
// take (worker.ts: stuckSends), as it does while the database does not answer; /healthz stays 200.

let close: () => Promise<void> = async () => {};
afterEach(() => close());

async function serve(databaseReady: boolean, stuckSends: number) {
  const app = express();
  registerHealthRoutes(
    app,
    async () => databaseReady,
    () => stuckSends,
  );
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  close = () => new Promise((resolve) => server.close(() => resolve()));
  const { port } = server.address() as AddressInfo;
  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: response.status, body: await response.json() };
  };
  return get;
}

describe("/readyz", () => {
  it.each([
    [true, 0, 200, { status: "ready" }],
    [true, 3, 503, { status: "not ready", reason: "delivery worker stuck: 3 sends hold slots" }],
    [false, 0, 503, { status: "not ready", reason: "database unreachable" }],
  ])("database ready %s, %i stuck sends: %i", async (databaseReady, stuck, status, body) => {
    const get = await serve(databaseReady, stuck);
    expect(await get("/readyz")).toEqual({ status, body });
    expect((await get("/healthz")).status).toBe(200);
  });
});

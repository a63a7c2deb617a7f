import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import express from "express";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorHandler } from "../../src/http/error-handler.js";

// A failure the service did not expect answers 500 with an error id, and the log line that holds the
// cause carries the same id: an operator given the answer finds the line.
describe("an unexpected failure in a request", () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  let base = "";
  let close: () => void = () => {};

  beforeAll(async () => {
    const app = express();
    app.get("/boom", () => {
      throw new Error('relation "secret_table" does not exist');
    });
    app.use(errorHandler(logger));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it("answers 500 with an error id that the log line carries, and no internals", async () => {
    const response = await fetch(`${base}/boom`);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string; id: string } };
    expect(body.error.code).toBe("internal");
    expect(body.error.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.error.message).toContain(body.error.id);
    expect(JSON.stringify(body)).not.toContain("secret_table");

    const logged = lines.find((line) => line.error_id === body.error.id);
    expect(logged?.msg).toBe("unhandled error in request");
    expect(JSON.stringify(logged)).toContain("secret_table");
  });

  it("gives each failure an id of its own", async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(
        async () => ((await (await fetch(`${base}/boom`)).json()) as { error: { id: string } }).error.id,
      ),
    );
    expect(new Set(ids).size).toBe(3);
  });
});

import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type Container,
  canQuery,
  engine,
  type PostgresContainer,
  startContainer,
  startPostgres,
  withOutputOf,
} from "../support/containers.js";
import { hostOnlyCertificates, imageFiles, imageLayersContain } from "../support/image-layers.js";
import { freePort } from "../support/ports.js";
import { waitUntil } from "../support/wait.js";

// The operator's image as the chart runs it: uid 1000, a read-only root, the database URL and the keys
// as mounted files, against the chart's database image, on the host's network.
const operatorImage = inject("operatorImage");
const postgresImage = inject("postgresImage");
const apiKey = `wo_${randomBytes(24).toString("hex")}`;
const password = randomBytes(12).toString("hex");

let postgres: PostgresContainer;
let databaseUrl: string;
let secrets: string;
beforeAll(async () => {
  postgres = await startPostgres(postgresImage, [`POSTGRES_PASSWORD=${password}`]);
  databaseUrl = `postgres://postgres:${password}@127.0.0.1:${postgres.port}/postgres`;
  await waitUntil("the database", () => canQuery(databaseUrl).catch(() => undefined), {
    timeoutMs: 60_000,
    intervalMs: 250,
  }).catch(withOutputOf(postgres.container));
  secrets = await mkdtemp(path.join(tmpdir(), "wo-image-keys-"));
  await chmod(secrets, 0o755); // mounted for uid 1000, like the chart's Secret volumes
  await writeFile(path.join(secrets, "api-key"), apiKey, { mode: 0o644 });
  await writeFile(path.join(secrets, "keys"), randomBytes(32).toString("base64"), { mode: 0o644 });
  await writeFile(path.join(secrets, "database-url"), `${databaseUrl}\n`, { mode: 0o644 });
});
afterAll(async () => {
  await postgres?.cleanup();
  if (secrets) await rm(secrets, { recursive: true, force: true });
});

const asTheChartRunsIt = (port: number) => [
  "--read-only",
  "--user",
  "1000:1000",
  "--network",
  "host",
  "--volume",
  `${secrets}:/etc/webhook-operator:ro`,
  "--env",
  "DATABASE_URL_FILE=/etc/webhook-operator/database-url",
  "--env",
  `PORT=${port}`,
  "--env",
  "HOST=127.0.0.1",
  "--env",
  "KUBERNETES=false",
];

describe("the operator image", () => {
  it("runs as 1000:1000 and is under 300 MB uncompressed", () => {
    const inspected = engine(["image", "inspect", "--format", "{{.Config.User}} {{.Size}}", operatorImage]);
    const [user, size] = inspected.stdout.trim().split(" ");
    expect(user).toBe("1000:1000");
    expect(Number(size)).toBeGreaterThan(100_000_000); // Node alone is 120 MB: a wrong field would be 0
    expect(Number(size)).toBeLessThan(300_000_000);
  });

  describe("started read-only as uid 1000 with its keys as files", () => {
    let operator: Container;
    let base: string;
    beforeAll(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      operator = startContainer(
        [
          ...asTheChartRunsIt(port),
          "--env",
          "API_KEY_FILE=/etc/webhook-operator/api-key",
          "--env",
          "SECRET_ENCRYPTION_KEYS_FILE=/etc/webhook-operator/keys",
        ],
        operatorImage,
      );
      await waitUntil(
        "/readyz",
        async () => ((await fetch(`${base}/readyz`).catch(() => undefined))?.ok ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 250,
        },
      ).catch(withOutputOf(operator));
    });
    afterAll(() => operator?.remove());

    it("serves /readyz, /api with the admin key (and not without), and the dashboard at /", async () => {
      expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: "ready" });
      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
      const created = await fetch(`${base}/api/projects`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "Image", slug: "image" }),
      });
      expect(created.status).toBe(201);
      const listed = (await (await fetch(`${base}/api/projects`, { headers })).json()) as {
        projects: { slug: string }[];
      };
      expect(listed.projects.map((project) => project.slug)).toEqual(["image"]);
      expect((await fetch(`${base}/api/projects`)).status).toBe(401);
      const dashboard = await fetch(`${base}/`);
      expect(dashboard.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await dashboard.text()).toContain("<!doctype html>");
    });

    it("runs as uid 1000 and cannot write its root filesystem", () => {
      expect(operator.exec(["sh", "-c", "id -u; id -g"]).stdout.split("\n").slice(0, 2)).toEqual([
        "1000",
        "1000",
      ]);
      const write = operator.exec(["sh", "-c", "touch /app/written"]);
      expect(write.status).not.toBe(0);
      expect(write.stderr).toContain("Read-only file system");
    });

    it("exits 0 on SIGTERM, after shutting down", () => {
      expect(operator.stop(60)).toBe(0);
      const log = operator.logs().stdout;
      expect(log).toContain('"msg":"shutting down"');
      expect(log).toContain('"msg":"stopped"');
    });
  });

  it("without an encryption key stops with one line naming SECRET_ENCRYPTION_KEYS and the _FILE form", async () => {
    const result = engine([
      "run",
      "--rm",
      ...asTheChartRunsIt(await freePort()),
      "--env",
      `API_KEY=${apiKey}`,
      operatorImage,
    ]);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([
      "webhook-operator failed to start: no SECRET_ENCRYPTION_KEYS or SECRET_ENCRYPTION_KEYS_FILE is set, and no key can be generated into /app/.data/secret-encryption-keys (ENOENT): set SECRET_ENCRYPTION_KEYS_FILE to a file holding a key (openssl rand -base64 32), or DATA_DIR to a writable directory kept with the database",
    ]);
  });

  it("holds none of the CA certificates the build was given (a build secret, in no layer)", async () => {
    const archive = await mkdtemp(path.join(tmpdir(), "wo-image-save-"));
    try {
      const file = path.join(archive, "image.tar");
      expect(engine(["save", "--output", file, operatorImage]).status).toBe(0);
      const files = await imageFiles(file);
      expect(files.length).toBeGreaterThan(1_000);
      expect(files.filter((name) => /npm_ca|ca-certificates\.crt|run\/secrets/.test(name))).toEqual([]);
      // The certificates the host has and Node's own list lacks, the proxy's among them: none is anywhere.
      const certificates = hostOnlyCertificates(await readFile("/etc/ssl/certs/ca-certificates.crt", "utf8"));
      expect(certificates.length).toBeGreaterThan(0);
      expect(await imageLayersContain(file, certificates)).toEqual([]);
    } finally {
      await rm(archive, { recursive: true, force: true });
    }
  });
});

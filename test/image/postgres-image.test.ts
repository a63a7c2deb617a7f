import { readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse } from "yaml";
import {
  canQuery,
  engine,
  type PostgresContainer,
  startPostgres,
  withOutputOf,
} from "../support/containers.js";
import { chartDir } from "../support/monitoring-files.js";
import { waitUntil } from "../support/wait.js";

// The chart's bundled database image (the official postgres, or where it cannot be pulled the stand-in
// `npm run image` builds) with the official image's conventions the chart relies on.
const postgresImage = inject("postgresImage");

describe("the chart's postgres image", () => {
  it("is the tag the chart pins, with the official image's user, PGDATA and volume", () => {
    const values = parse(readFileSync(path.join(chartDir, "values.yaml"), "utf8"));
    expect(postgresImage.endsWith(`/${values.postgres.image.repository}:${values.postgres.image.tag}`)).toBe(
      true,
    );
    const major = values.postgres.image.tag.split(".")[0];
    const config = JSON.parse(
      engine(["image", "inspect", "--format", "{{json .Config}}", postgresImage]).stdout,
    );
    expect(config.Env).toContain(`PGDATA=/var/lib/postgresql/${major}/docker`);
    expect(Object.keys(config.Volumes)).toEqual(["/var/lib/postgresql"]);
    expect(config.StopSignal).toBe("SIGINT");
    expect(engine(["run", "--rm", "--entrypoint", "id", postgresImage, "postgres"]).stdout.trim()).toBe(
      "uid=999(postgres) gid=999(postgres) groups=999(postgres)",
    );
  });

  describe("initialised from POSTGRES_PASSWORD_FILE, POSTGRES_USER, POSTGRES_DB and an init script", () => {
    let scratch: string;
    let postgres: PostgresContainer;
    beforeAll(async () => {
      scratch = await mkdtemp(path.join(tmpdir(), "wo-image-pg-init-"));
      await chmod(scratch, 0o755); // its files are mounted for uid 999
      await writeFile(path.join(scratch, "password"), "from-a-file\n", { mode: 0o644 });
      await writeFile(
        path.join(scratch, "01-table.sql"),
        "CREATE TABLE greeting (word text); INSERT INTO greeting VALUES ('hello');",
        { mode: 0o644 },
      );
      postgres = await startPostgres(
        postgresImage,
        ["POSTGRES_PASSWORD_FILE=/run/secrets/password", "POSTGRES_USER=operator", "POSTGRES_DB=hooks"],
        [
          "--volume",
          `${path.join(scratch, "password")}:/run/secrets/password:ro`,
          "--volume",
          `${path.join(scratch, "01-table.sql")}:/docker-entrypoint-initdb.d/01-table.sql:ro`,
        ],
      );
    });
    afterAll(async () => {
      await postgres?.cleanup();
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });
    const url = (password: string) => `postgres://operator:${password}@127.0.0.1:${postgres.port}/hooks`;

    it("accepts the file's password (its newline dropped) over TCP, and refuses another", async () => {
      await waitUntil("the database", () => canQuery(url("from-a-file")).catch(() => undefined), {
        timeoutMs: 60_000,
        intervalMs: 250,
      }).catch(withOutputOf(postgres.container));
      await expect(canQuery(url("wrong"))).rejects.toThrow(
        /password authentication failed for user "operator"/,
      );
    });

    it("ran the init script in POSTGRES_DB, runs as 999, and answers pg_isready", () => {
      const query = postgres.container.exec([
        "psql",
        "--username",
        "operator",
        "--dbname",
        "hooks",
        "--tuples-only",
        "--no-align",
        "--command",
        "SELECT word FROM greeting",
      ]);
      expect(query.stdout.trim()).toBe("hello");
      expect(postgres.container.exec(["sh", "-c", "id -u"]).stdout.trim()).toBe("999");
      const ready = postgres.container.exec([
        "pg_isready",
        "--host",
        "127.0.0.1",
        "--username",
        "operator",
        "--dbname",
        "hooks",
      ]);
      expect(ready.status).toBe(0);
    });

    it("stops cleanly on its stop signal", () => {
      expect(postgres.container.stop(30)).toBe(0);
      const logs = postgres.container.logs();
      expect(logs.stdout + logs.stderr).toContain("database system is shut down");
    });
  });

  it("refuses to initialise without a password, saying which variables to set", async () => {
    const result = engine(["run", "--rm", "--user", "999:999", postgresImage]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE");
  });
});

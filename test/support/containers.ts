import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./ports.js";
import { type RunResult, run } from "./tools.js";

// Containers for the image suite, through scripts/image/engine.sh: docker where its daemon answers,
// else podman with the settings this kind of machine needs (the script knows them, the tests do not).

export function engine(args: string[]): RunResult {
  return run("bash", ["scripts/image/engine.sh", ...args]);
}

function engineOrThrow(args: string[]): string {
  const result = engine(args);
  if (result.status !== 0) throw new Error(`engine ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout.trim();
}

export interface Container {
  name: string;
  logs(): RunResult;
  exec(command: string[]): RunResult;
  /** `stop` (the image's stop signal, then SIGKILL after `seconds`); returns the exit code. */
  stop(seconds: number): number;
  remove(): void;
}

/** `run --detach` with a unique name; the caller removes it (remove() also drops anonymous volumes). */
export function startContainer(runArgs: string[], image: string, command: string[] = []): Container {
  const name = `wo-test-${randomBytes(4).toString("hex")}`;
  engineOrThrow(["run", "--detach", "--name", name, ...runArgs, image, ...command]);
  return {
    name,
    logs: () => engine(["logs", name]),
    exec: (command) => engine(["exec", name, ...command]),
    stop(seconds) {
      engineOrThrow(["stop", "--time", String(seconds), name]);
      return Number(engineOrThrow(["inspect", "--format", "{{.State.ExitCode}}", name]));
    },
    remove: () => void engine(["rm", "--force", "--volumes", name]),
  };
}

/** For a failed wait on a container: the error again, ending with the container's last output. */
export function withOutputOf(container: Container) {
  return (error: unknown): never => {
    const logs = container.logs();
    if (!logs) throw error;
    const tail = `${logs.stdout}${logs.stderr}`.split("\n").slice(-20).join("\n");
    throw new Error(`${(error as Error).message}; its output:\n${tail}`);
  };
}

/** Connects once (a query, not just a socket: the initialising server listens on its socket only). */
export async function canQuery(url: string): Promise<true | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface PostgresContainer {
  container: Container;
  port: number;
  /** Removes the container with its volumes, and the host directories it was given. */
  cleanup(): Promise<void>;
}

/**
 * The chart's database image as the chart runs it: as 999, a read-only root with writable volumes for
 * the socket directory and /tmp, published on a loopback port. `env` are its variables (-e NAME=value).
 */
export async function startPostgres(
  image: string,
  env: string[],
  extra: string[] = [],
): Promise<PostgresContainer> {
  const scratch = await mkdtemp(path.join(tmpdir(), "wo-image-pg-"));
  const socketDir = path.join(scratch, "run");
  const tmp = path.join(scratch, "tmp");
  for (const dir of [socketDir, tmp]) {
    await mkdir(dir);
    await chmod(dir, 0o1777); // like the chart's emptyDirs, writable by the container's user
  }
  const port = await freePort();
  const container = startContainer(
    [
      "--user",
      "999:999",
      "--read-only",
      "--volume",
      `${socketDir}:/var/run/postgresql`,
      "--volume",
      `${tmp}:/tmp`,
      "--publish",
      `127.0.0.1:${port}:5432`,
      ...env.flatMap((pair) => ["--env", pair]),
      ...extra,
    ],
    image,
  );
  return {
    container,
    port,
    async cleanup() {
      container.remove();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

import { readFile, stat } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";

// Checks made before starting the embedded Postgres, so that each way it can fail to start is
// reported as what it is, with what to do about it (see startEmbeddedPostgres).

/** A start-up failure a user can fix: its message says what failed and what to do. */
export class EmbeddedPostgresError extends Error {}

/** Resolves when `port` can be bound on 127.0.0.1; otherwise throws a message naming it. */
export async function assertPortFree(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(
          new EmbeddedPostgresError(
            `Port ${port} on 127.0.0.1 is already in use, so the embedded Postgres cannot listen there (another Postgres, or another webhook-operator?). Stop whatever uses it, set EMBEDDED_POSTGRES_PORT to a free port, or set DATABASE_URL to use a Postgres of your own.`,
          ),
        );
      } else reject(error);
    });
    server.listen(port, "127.0.0.1", () => resolve());
  });
  await new Promise((resolve) => server.close(resolve));
}

export interface LeftoverPostmaster {
  pid: number;
  /** Its parent still runs: another process (a webhook-operator started here) is using it. */
  owned: boolean;
}

/**
 * The postmaster that holds `databaseDir` (its postmaster.pid), if it still runs. After a SIGKILL of
 * the process that started it, it is orphaned: re-parented, its original parent gone.
 */
export async function findLeftoverPostmaster(
  databaseDir: string,
  startedBy: (pid: number) => Promise<number | undefined> = parentOf,
): Promise<LeftoverPostmaster | undefined> {
  let pidFile: string;
  try {
    pidFile = await readFile(path.join(databaseDir, "postmaster.pid"), "utf8");
  } catch {
    return undefined;
  }
  const pid = Number(pidFile.split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isRunning(pid)) return undefined;
  const command = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  if (!command.includes("postgres")) return undefined; // a reused pid: Postgres clears the stale file itself
  const parent = await startedBy(pid);
  const owned =
    parent !== undefined &&
    parent > 1 &&
    (await readFile(`/proc/${parent}/cmdline`, "utf8").catch(() => "")).includes("node");
  return { pid, owned };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function parentOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const ppid = /^PPid:\s+(\d+)/m.exec(status)?.[1];
  return ppid ? Number(ppid) : undefined;
}

/** Stops a leftover postmaster (fast shutdown) and waits up to 15 s for it to exit. */
export async function stopPostmaster(pid: number): Promise<void> {
  process.kill(pid, "SIGINT");
  for (let waited = 0; waited < 15_000 && isRunning(pid); waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
  if (isRunning(pid))
    throw new EmbeddedPostgresError(
      `A Postgres left running by an earlier run (pid ${pid}) did not stop; stop it (kill ${pid}) and start again.`,
    );
}

/**
 * As root, the embedded Postgres runs as the `postgres` user, who must be able to pass through every
 * directory above its binaries and its data. Returns the first directory that others cannot enter
 * (no o+x: a checkout under /root, say), or undefined.
 */
export async function unreachableDirectory(target: string): Promise<string | undefined> {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let current: string = path.sep;
  for (const part of parts) {
    current = path.join(current, part);
    const info = await stat(current).catch(() => undefined);
    if (!info?.isDirectory()) break; // not made yet (the data directory): its parents were checked
    if ((info.mode & 0o001) === 0) return current;
  }
  return undefined;
}

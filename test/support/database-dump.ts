import { spawnSync } from "node:child_process";
import pg from "pg";

// What someone holding a copy of the database would read. pg_dump when the one on PATH can dump this
// server (pg_dump refuses servers newer than itself: the Debian PostgreSQL 15 run of .ci/run has a
// matching one, the embedded PostgreSQL 18 ships none); otherwise every row of every table, as text.

export interface DatabaseDump {
  tool: "pg_dump" | "select every row";
  text: string;
}

function pgDumpMajor(): number | undefined {
  const result = spawnSync("pg_dump", ["--version"], { encoding: "utf8" });
  if (result.status !== 0) return undefined;
  const match = /(\d+)(\.\d+)?/.exec(result.stdout);
  return match ? Number(match[1]) : undefined;
}

export async function dumpDatabase(url: string): Promise<DatabaseDump> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const serverMajor = Math.floor(
      Number((await client.query<{ v: string }>("SHOW server_version_num")).rows[0]?.v) / 10_000,
    );
    const toolMajor = pgDumpMajor();
    if (toolMajor !== undefined && toolMajor >= serverMajor) {
      const result = spawnSync("pg_dump", ["--dbname", url], {
        encoding: "utf8",
        maxBuffer: 256 * 1024 * 1024,
      });
      if (result.status !== 0) throw new Error(`pg_dump failed: ${result.stderr}`);
      return { tool: "pg_dump", text: result.stdout };
    }
    const tables = await client.query<{ name: string }>(
      "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
    );
    const parts: string[] = [];
    for (const { name } of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`);
      parts.push(`-- ${name}`, ...rows.rows.map(({ row }) => row));
    }
    return { tool: "select every row", text: parts.join("\n") };
  } finally {
    await client.end();
  }
}

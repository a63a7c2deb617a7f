import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { engineSqlDirectory, renderStatementFile } from "./engine-sql/render.js";
import { engineStatements } from "./engine-sql/statements.js";

// npm run generate:sql: rewrites src/delivery-engine/sql/ from the statements the engine composes, one
// file per variant, and removes files of variants that no longer exist.
const directory = path.join(import.meta.dirname, "..", engineSqlDirectory);
mkdirSync(directory, { recursive: true });
const statements = await engineStatements();
const files = new Set(statements.map((statement) => statement.file));
for (const file of readdirSync(directory))
  if (file.endsWith(".sql") && !files.has(file)) rmSync(path.join(directory, file));
for (const statement of statements)
  writeFileSync(path.join(directory, statement.file), renderStatementFile(statement));
console.log(`${statements.length} statements written to ${engineSqlDirectory}/`);

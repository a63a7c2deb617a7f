import { readFileSync } from "node:fs";

/**
 * DATABASE_URL_FILE: the database URL (password included) read from a file, such as a mounted
 * Kubernetes Secret, rather than from an environment variable. Errors name the setting and the file,
 * never its content. Returns the URL for the same validation DATABASE_URL gets.
 */
export function readDatabaseUrlFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(
      `DATABASE_URL_FILE: ${file} cannot be read (${reason}): mount the file holding the database URL there, or set DATABASE_URL instead`,
    );
  }
  const url = text.trim();
  if (url === "") {
    throw new Error(
      `DATABASE_URL_FILE: ${file} is empty: it must hold the database URL (postgres://user:password@host:5432/db)`,
    );
  }
  return url;
}

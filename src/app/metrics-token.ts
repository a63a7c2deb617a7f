import { readFileSync } from "node:fs";

export const metricsTokenMinLength = 16;

/**
 * The token /metrics requires: METRICS_TOKEN, or the content of METRICS_TOKEN_FILE (a mounted Secret,
 * so the token stays out of the environment), surrounding whitespace dropped. Errors name the setting
 * and the file, never the token.
 */
export function metricsTokenOf(value: string | undefined, file: string | undefined): string | undefined {
  if (file === undefined) return value;
  if (value !== undefined)
    throw new Error("METRICS_TOKEN_FILE: METRICS_TOKEN is set too; set only one of them");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`METRICS_TOKEN_FILE: ${file} cannot be read (${reason})`);
  }
  const token = text.trim();
  if (token.length < metricsTokenMinLength) {
    throw new Error(
      `METRICS_TOKEN_FILE: ${file} must hold a token of at least ${metricsTokenMinLength} characters`,
    );
  }
  return token;
}

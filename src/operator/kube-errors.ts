import { ApiException } from "@kubernetes/client-node";

function statusCode(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "number")
    return error.code;
  // client-node's Watch reports a refused watch as an Error with statusCode.
  if (
    typeof error === "object" &&
    error !== null &&
    "statusCode" in error &&
    typeof error.statusCode === "number"
  )
    return error.statusCode;
  return undefined;
}

export const isNotFound = (error: unknown): boolean => statusCode(error) === 404;
export const isConflict = (error: unknown): boolean => statusCode(error) === 409;

/** The delay a 429 or 503 answer asks for (its Retry-After seconds), in ms; 0 when it asks for none. */
export function retryAfterMs(error: unknown): number {
  const seconds = error instanceof ApiException ? Number(error.headers?.["retry-after"]) : Number.NaN;
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

/**
 * One line for a warning: the status code and the API server's own message ("HTTP 404: the server
 * could not find the requested resource"), or the network error's code, without client-node's dump of
 * the whole response (the full error goes to debug).
 */
export function describeKubeError(error: unknown): string {
  const code = statusCode(error);
  if (error instanceof ApiException)
    return `HTTP ${code}: ${statusMessage(error.body) ?? error.message.split("\n")[0]}`;
  if (!(error instanceof Error)) return String(error);
  const cause = (error.cause as { code?: string } | undefined)?.code;
  if (code !== undefined) return `HTTP ${code}: ${error.message}`;
  return cause ? `${error.message} (${cause})` : error.message;
}

function statusMessage(body: unknown): string | undefined {
  try {
    const status = (typeof body === "string" ? JSON.parse(body) : body) as { message?: unknown } | undefined;
    return typeof status?.message === "string" ? status.message : undefined;
  } catch {
    return typeof body === "string" && body.trim() !== "" ? body.trim().slice(0, 200) : undefined;
  }
}

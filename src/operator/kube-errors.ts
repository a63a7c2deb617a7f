import { ApiException } from "@kubernetes/client-node";

function statusCode(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "number")
    return error.code;
  return undefined;
}

export const isNotFound = (error: unknown): boolean => statusCode(error) === 404;
export const isConflict = (error: unknown): boolean => statusCode(error) === 409;

/** The delay a 429 or 503 answer asks for (its Retry-After seconds) in ms; 0 when it asks for none. */
export function retryAfterMs(error: unknown): number {
  const seconds = error instanceof ApiException ? Number(error.headers?.["retry-after"]) : Number.NaN;
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

export const isForbidden = (error: unknown): boolean => statusCode(error) === 403;

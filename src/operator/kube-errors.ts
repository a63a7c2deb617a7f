import { ApiException } from "@kubernetes/client-node";

function statusCode(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "number")
    return error.code;
  return undefined;
}

export const isNotFound = (error: unknown): boolean => statusCode(error) === 404;
export const isConflict = (error: unknown): boolean => statusCode(error) === 409;

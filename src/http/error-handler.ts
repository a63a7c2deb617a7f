import { randomUUID } from "node:crypto";
import type { ErrorRequestHandler } from "express";
import { ZodError } from "zod";
import { isDatabaseUnreachable } from "../db/observed-pool.js";
import {
  ApiError,
  BadRequestError,
  InternalError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  ValidationError,
} from "../errors.js";
import type { Logger } from "../logger.js";
import { cutShort, describedIssuesLimit, issueMessage } from "./cut-short.js";

/**
 * Describes zod issues as `path: message` lines a user can act on; names the client chose (unknown
 * fields, keys of maps) are quoted cut short, and past a few problems the rest are counted.
 */
export function validationErrorFrom(error: ZodError, where: string): ValidationError {
  const described = error.issues.slice(0, describedIssuesLimit);
  const details = described.map((issue) => ({
    path: [where, ...issue.path.map((segment) => cutShort(String(segment)))].join("."),
    message: issueMessage(issue),
  }));
  const more = error.issues.length - described.length;
  const summary = details.map((detail) => `${detail.path}: ${detail.message}`).join("; ");
  return new ValidationError(
    `Invalid request: ${summary}${more > 0 ? `; and ${more} more problems` : ""}`,
    details,
  );
}

export const malformedJson = () => new BadRequestError("Malformed JSON in request body.");

/** body-parser reports its failures as errors with a `type`; map the ones a client can cause. */
function fromBodyParser(error: { type?: unknown; limit?: unknown }): ApiError | undefined {
  if (error.type === "entity.parse.failed") return malformedJson();
  if (error.type === "entity.too.large") {
    return new PayloadTooLargeError(`Request body is larger than the limit of ${String(error.limit)} bytes.`);
  }
  if (error.type === "encoding.unsupported" || error.type === "charset.unsupported") {
    return new BadRequestError("Unsupported request body encoding; send UTF-8 JSON.");
  }
  return undefined;
}

// Logged once per episode where the connections fail (db/connection-episodes.ts), not per request.
const databaseUnavailable = new ServiceUnavailableError(
  "The database did not answer in time. Try again shortly.",
);

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let apiError: ApiError | undefined;
    if (error instanceof ApiError) apiError = error;
    else if (error instanceof ZodError) apiError = validationErrorFrom(error, "body");
    else if (isDatabaseUnreachable(error)) apiError = databaseUnavailable;
    else if (typeof error === "object" && error !== null) apiError = fromBodyParser(error);
    if (!apiError) {
      // Internals (SQL, stack) go to the log only; the client gets a generic message and the id that
      // finds the log line.
      const errorId = randomUUID();
      logger.error(
        { err: error, method: req.method, path: req.path, error_id: errorId },
        "unhandled error in request",
      );
      apiError = new InternalError(errorId);
    }
    if (apiError instanceof MethodNotAllowedError) res.set("Allow", apiError.allow);
    if (apiError instanceof TooManyRequestsError) res.set("Retry-After", String(apiError.retryAfterSeconds));
    res.status(apiError.status).json(apiError.toJSON());
  };
}

// One error hierarchy for the API. Handlers throw these; errorHandler (http/error-handler.ts) is the
// only place that turns an error into a response: {"error": {"code", "message", "details"?, "id"?}}.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }

  /** Ties an answer to its log line; only failures that are logged carry one (a 500). */
  readonly id?: string;

  toJSON(): { error: { code: string; message: string; details?: unknown; id?: string } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
        ...(this.id === undefined ? {} : { id: this.id }),
      },
    };
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, details?: unknown) {
    super(400, "bad_request", message, details);
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, details: { path: string; message: string }[]) {
    super(400, "validation_failed", message, details);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message: string) {
    super(401, "unauthorized", message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, "forbidden", message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "not_found", message);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(
    message: string,
    readonly allow: string,
  ) {
    super(405, "method_not_allowed", message);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, "conflict", message);
  }
}

/** What was asked for existed and was removed for good (retention). */
export class GoneError extends ApiError {
  constructor(message: string) {
    super(410, "gone", message);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, "payload_too_large", message);
  }
}

/** Over a bound that frees with time: `Retry-After` says when asking again makes sense. */
export class TooManyRequestsError extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, "too_many_requests", message);
  }
}

/** A dependency the request needs (the Kubernetes API server) cannot be reached: retrying may help. */
export class ServiceUnavailableError extends ApiError {
  constructor(message: string) {
    super(503, "unavailable", message);
  }
}

export class InternalError extends ApiError {
  override readonly id: string;

  constructor(id: string) {
    super(500, "internal", `Internal server error. The failure has been logged with error id ${id}.`);
    this.id = id;
  }
}

import type { ApiError } from "../errors.js";

// Errors of the aggregated API are Kubernetes `Status` objects (what kubectl prints as
// `Error from server (Forbidden): …`), never the `{"error": …}` shape of /api.

export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "UnsupportedMediaType"
  | "Gone"
  | "Conflict"
  | "AlreadyExists"
  | "RequestEntityTooLarge"
  | "TooManyRequests"
  | "Invalid"
  | "InternalError"
  | "ServiceUnavailable";

const codes: Record<StatusReason, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  UnsupportedMediaType: 415,
  Gone: 410,
  Conflict: 409,
  AlreadyExists: 409,
  RequestEntityTooLarge: 413,
  TooManyRequests: 429,
  Invalid: 422,
  InternalError: 500,
  ServiceUnavailable: 503,
};

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
}

export class KubeStatusError extends Error {
  readonly code: number;
  constructor(
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.code = codes[reason];
  }

  toStatus() {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

const reasonsByCode: Record<number, StatusReason> = Object.fromEntries(
  Object.entries(codes)
    .reverse()
    .map(([reason, code]) => [code, reason as StatusReason]),
);

/** An error of /api's hierarchy (a replay's 409, 410, 429) as a Status with the same code and message. */
export function statusOfApiError(error: ApiError): KubeStatusError {
  return new KubeStatusError(reasonsByCode[error.status] ?? "InternalError", error.message);
}

/**
 * What a refused request answers, as kube-apiserver words it (`kubectl` shows the message), and saying
 * who refused: the API server's RBAC refuses first, so a refusal of ours means its answer changed in
 * between, or a request reached us by another way.
 */
export function forbidden(
  user: string,
  verb: string,
  resource: string,
  group: string,
  namespace: string | undefined,
  name?: string,
): KubeStatusError {
  const what = name ? `${resource} "${name}"` : resource;
  const scope = namespace ? `in the namespace "${namespace}"` : "at the cluster scope";
  return new KubeStatusError(
    "Forbidden",
    `${what} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${group}" ${scope} (refused by webhook-operator's aggregated API)`,
    { ...(name ? { name } : {}), group, kind: resource },
  );
}

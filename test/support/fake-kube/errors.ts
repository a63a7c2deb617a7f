// FAKE Kubernetes API server for tests: metav1.Status errors, shaped as the real kube-apiserver sends them.
import type { ResourceType } from "./resources.js";

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status as it appears on the wire. */
export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An API error; `toStatus()` is the body the fake answers with (and sends in watch ERROR events). */
export class KubeStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = "KubeStatusError";
  }

  toStatus(): KubeStatus {
    const status: KubeStatus = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `webhooks.webhook-operator.io`, `deployments.apps`, `secrets`: how the apiserver names a resource. */
export function qualifiedResource(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/** `Webhook.webhook-operator.io`, `Deployment.apps`, `Secret`: how validation errors name a kind. */
export function qualifiedKind(type: ResourceType): string {
  return type.group ? `${type.kind}.${type.group}` : type.kind;
}

function details(type: ResourceType, name: string): StatusDetails {
  return { name, group: type.group, kind: type.plural };
}

export function notFound(type: ResourceType, name: string): KubeStatusError {
  return new KubeStatusError(
    404,
    "NotFound",
    `${qualifiedResource(type)} "${name}" not found`,
    details(type, name),
  );
}

export function alreadyExists(type: ResourceType, name: string): KubeStatusError {
  return new KubeStatusError(
    409,
    "AlreadyExists",
    `${qualifiedResource(type)} "${name}" already exists`,
    details(type, name),
  );
}

export function conflict(type: ResourceType, name: string, why?: string): KubeStatusError {
  return new KubeStatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${
      why ?? "the object has been modified; please apply your changes to the latest version and try again"
    }`,
    details(type, name),
  );
}

export function invalid(type: ResourceType, name: string, causes: StatusCause[]): KubeStatusError {
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = parts.length === 1 ? parts[0] : `[${parts.join(", ")}]`;
  return new KubeStatusError(422, "Invalid", `${qualifiedKind(type)} "${name}" is invalid: ${summary}`, {
    name,
    group: type.group,
    kind: type.kind,
    causes,
  });
}

export function badRequest(message: string): KubeStatusError {
  return new KubeStatusError(400, "BadRequest", message);
}

export function forbidden(message: string): KubeStatusError {
  return new KubeStatusError(403, "Forbidden", message);
}

export function expired(message: string): KubeStatusError {
  return new KubeStatusError(410, "Expired", message);
}

export function unsupportedMediaType(message: string): KubeStatusError {
  return new KubeStatusError(415, "UnsupportedMediaType", message);
}

export function methodNotAllowed(): KubeStatusError {
  return new KubeStatusError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
  );
}

export function pathNotFound(): KubeStatusError {
  return new KubeStatusError(404, "NotFound", "the server could not find the requested resource");
}

/** Field error helpers, with the messages of k8s.io/apimachinery/pkg/util/validation/field. */
export const fieldError = {
  required: (field: string, detail = ""): StatusCause => ({
    reason: "FieldValueRequired",
    message: detail ? `Required value: ${detail}` : "Required value",
    field,
  }),
  invalid: (field: string, value: unknown, detail: string): StatusCause => ({
    reason: "FieldValueInvalid",
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
    field,
  }),
  notSupported: (field: string, value: unknown, allowed: readonly unknown[]): StatusCause => ({
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed
      .map((a) => JSON.stringify(a))
      .join(", ")}`,
    field,
  }),
  forbidden: (field: string, detail: string): StatusCause => ({
    reason: "FieldValueForbidden",
    message: `Forbidden: ${detail}`,
    field,
  }),
  duplicate: (field: string, value: unknown): StatusCause => ({
    reason: "FieldValueDuplicate",
    message: `Duplicate value: ${JSON.stringify(value)}`,
    field,
  }),
  tooLong: (field: string, max: number): StatusCause => ({
    reason: "FieldValueTooLong",
    message: `Too long: may not be more than ${max} bytes`,
    field,
  }),
  tooMany: (field: string, actual: number, max: number): StatusCause => ({
    reason: "FieldValueTooMany",
    message: `Too many: ${actual}: must have at most ${max} items`,
    field,
  }),
};

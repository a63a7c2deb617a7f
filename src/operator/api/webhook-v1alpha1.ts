import { eventTypeNames } from "../../event-types.js";
import {
  headerNamePattern,
  maxCustomHeaders,
  maxHeaderNameLength,
  maxHeaderValueLength,
} from "../../formats/custom-header-rules.js";
import { templateLimits } from "../../formats/template-limits.js";
import { type DeliveryFormat, deliveryFormats } from "../../formats/types.js";
import { fragmentMessage, httpUrlMessage, httpUrlPattern } from "../../http/schemas.js";
import { filtersSchema, type WebhookSpecFilters } from "./filters-schema.js";
import { celRules, headerListRules, headerRules, specRules } from "./spec-rules.js";

// The Webhook custom resource (webhook-operator.io/v1alpha1), defined once here. The CRD in crds/ is
// generated from this file (`npm run generate:crd`; a test fails when it is out of date), and the
// reconciler validates specs against the same schema, so the CRD and the code cannot drift.

export const group = "webhook-operator.io";
export const version = "v1alpha1";
export const kind = "Webhook";
export const plural = "webhooks";
export const singular = "webhook";
export const shortNames = ["wh"];
export const apiVersion = `${group}/${version}`;
/** Set on every Webhook the operator manages, so the service row is deleted before the resource. */
export const finalizer = `${group}/finalizer`;

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface WebhookHeader {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: SecretKeyRef };
}

export interface WebhookSpec {
  /** Exactly one of `url` and `urlSecretRef` (a CEL rule; `validateWebhookSpec` checks it again). */
  url?: string;
  urlSecretRef?: SecretKeyRef;
  events: string[];
  enabled: boolean;
  secretRef?: SecretKeyRef;
  format?: DeliveryFormat;
  cloudEventsMode?: "structured" | "binary";
  template?: string;
  templateContentType?: string;
  signatureScheme?: "hmac-sha256" | "standard-webhooks";
  headers?: WebhookHeader[];
  retryPolicy?: { maxAttempts: number };
  autoDisable?: { afterFailures: number; minDurationSeconds: number };
  filters?: WebhookSpecFilters;
  rateLimit?: { perSecond: number; burst: number };
  rolloutDetails?: boolean;
}

/** Shaped like metav1.Condition. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface WebhookStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  webhookId?: number;
  projectId?: number;
  hasSecret?: boolean;
  lastDelivery?: { at: string; success: boolean; statusCode: number; eventType: string };
}

export interface WebhookResource {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    [key: string]: unknown;
  };
  spec: WebhookSpec;
  status?: WebhookStatus;
}

const dnsSubdomain = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

const secretKeyRefSchema = (description: string) =>
  ({
    type: "object",
    required: ["name", "key"],
    properties: {
      name: { type: "string", minLength: 1, maxLength: 253, pattern: dnsSubdomain },
      key: { type: "string", minLength: 1, maxLength: 253, pattern: "^[-._a-zA-Z0-9]+$" },
    },
    description,
  }) as const;

const headerSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: maxHeaderNameLength, pattern: headerNamePattern },
    value: { type: "string", maxLength: maxHeaderValueLength, description: "The value, in the manifest." },
    valueFrom: {
      type: "object",
      required: ["secretKeyRef"],
      properties: {
        secretKeyRef: secretKeyRefSchema("Secret in the Webhook's namespace holding the value."),
      },
    },
  },
  "x-kubernetes-validations": celRules(headerRules),
} as const;

export const specSchema = {
  type: "object",
  required: ["events"],
  properties: {
    url: {
      type: "string",
      maxLength: 2048,
      pattern: "^https?://[^\\s/]+",
      description:
        "Receiver address: an absolute http:// or https:// URL. Exactly one of url and urlSecretRef.",
    },
    urlSecretRef: secretKeyRefSchema(
      "Secret in the Webhook's namespace holding the receiver address (a Slack or Teams webhook URL is a credential). Exactly one of url and urlSecretRef.",
    ),
    events: {
      type: "array",
      minItems: 1,
      maxItems: eventTypeNames.length,
      items: { type: "string", enum: [...eventTypeNames] },
      "x-kubernetes-list-type": "set",
      description: "Subscribed event names (GET /api/webhook-event-types lists them).",
    },
    enabled: { type: "boolean", default: true, description: "Disabled webhooks get no deliveries." },
    secretRef: secretKeyRefSchema("Secret in the Webhook's namespace holding the signing secret."),
    format: {
      type: "string",
      enum: [...deliveryFormats],
      description:
        "The body's shape: envelope (the default: our JSON and X-Webhook-* headers), cloudevents, slack, msteams, discord, googlechat, or template.",
    },
    cloudEventsMode: {
      type: "string",
      enum: ["structured", "binary"],
      description: "For format cloudevents: structured (the default) or binary (ce-* headers).",
    },
    template: {
      type: "string",
      maxLength: templateLimits.sourceChars,
      description: "For format template (and only then): the body as a Liquid template.",
    },
    templateContentType: {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description: "The Content-Type of the template's output (default application/json).",
    },
    signatureScheme: {
      type: "string",
      enum: ["hmac-sha256", "standard-webhooks"],
      description:
        "hmac-sha256 (the default, X-Webhook-Signature) or standard-webhooks (webhook-id, webhook-timestamp, webhook-signature).",
    },
    rolloutDetails: {
      type: "boolean",
      description:
        "true: each rollout event recorded from the cluster carries payload.rollout (the workload, images before and after, version labels, links; on deployment.failed what the pods report). Default false: bodies as without it.",
    },
    headers: {
      type: "array",
      maxItems: maxCustomHeaders,
      items: headerSchema,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      "x-kubernetes-validations": celRules(headerListRules),
      description:
        "Request headers of every delivery (an Authorization, an API key), each from value or valueFrom.",
    },
    retryPolicy: {
      type: "object",
      required: ["maxAttempts"],
      properties: {
        maxAttempts: { type: "integer", minimum: 1, maximum: 6 },
      },
      description:
        "Opt-in automatic retries: up to maxAttempts attempts of an event in all, after 5 s, 1 min, 5 min, 30 min, 2 h (±20 % jitter). Absent: no automatic retry.",
    },
    autoDisable: {
      type: "object",
      required: ["afterFailures", "minDurationSeconds"],
      properties: {
        afterFailures: { type: "integer", minimum: 1, maximum: 1000 },
        minDurationSeconds: { type: "integer", minimum: 0, maximum: 2592000 },
      },
      description:
        "Opt-in: disable deliveries after afterFailures failed deliveries in a row over at least minDurationSeconds (Ready=False, reason AutoDisabled), or at the receiver's first 410 Gone (reason ReceiverGone). A change to the spec enables it again.",
    },
    rateLimit: {
      type: "object",
      required: ["perSecond", "burst"],
      properties: {
        perSecond: { type: "number", minimum: 0.001, maximum: 10000 },
        burst: { type: "integer", minimum: 1, maximum: 10000 },
      },
      description:
        "Opt-in: at most burst deliveries at once, then perSecond a second, shared by every replica. Absent: as fast as the service sends.",
    },
    filters: filtersSchema,
  },
  // The API's URL rules (http/schemas.ts), checked by the API server itself so a Webhook that breaks
  // them is refused when applied, as the same URL is a 400 through /api. CEL rather than `pattern`:
  // a failed rule answers with its message, never with the URL (which may carry a password).
  "x-kubernetes-validations": [
    {
      rule: "!has(self.url) || self.url.startsWith('http://') || self.url.startsWith('https://')",
      message: "url must start with http:// or https://",
    },
    { rule: "!has(self.url) || !self.url.contains('#')", message: fragmentMessage("url") },
    {
      rule: `!has(self.url) || self.url.matches(r'${httpUrlPattern.source}')`,
      message: httpUrlMessage("url"),
    },
    ...celRules(specRules),
  ],
} as const;

const conditionSchema = {
  type: "object",
  required: ["type", "status", "lastTransitionTime", "reason", "message"],
  properties: {
    type: { type: "string" },
    status: { type: "string", enum: ["True", "False", "Unknown"] },
    observedGeneration: { type: "integer", format: "int64" },
    lastTransitionTime: { type: "string", format: "date-time" },
    reason: { type: "string" },
    message: { type: "string" },
  },
} as const;

export const statusSchema = {
  type: "object",
  properties: {
    observedGeneration: { type: "integer", format: "int64" },
    conditions: {
      type: "array",
      items: conditionSchema,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
    },
    webhookId: { type: "integer", format: "int64" },
    projectId: { type: "integer", format: "int64" },
    hasSecret: { type: "boolean" },
    lastDelivery: {
      type: "object",
      properties: {
        at: { type: "string", format: "date-time" },
        success: { type: "boolean" },
        statusCode: { type: "integer" },
        eventType: { type: "string" },
      },
    },
  },
} as const;

/** The CustomResourceDefinition object (written to crds/ as YAML). */
export function customResourceDefinition() {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular, shortNames },
      scope: "Namespaced",
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: "URL", type: "string", jsonPath: ".spec.url" },
            { name: "Events", type: "string", jsonPath: ".spec.events" },
            { name: "Enabled", type: "boolean", jsonPath: ".spec.enabled" },
            { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
            { name: "Last Delivery", type: "date", jsonPath: ".status.lastDelivery.at" },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: "An outbound webhook that receives signed deployment.* events of its namespace.",
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec: specSchema,
                status: statusSchema,
              },
            },
          },
        },
      ],
    },
  };
}

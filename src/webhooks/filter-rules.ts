// The bounds and the syntax of a webhook's filters, shared by the API's schema (filter-schemas.ts) and
// the Webhook resource's CRD schema (operator/api/filters-schema.ts). Filters come from tenants: every
// list and string is bounded, and nothing a tenant writes is ever used as a pattern.

export const workloadKinds = ["Deployment", "StatefulSet", "DaemonSet"] as const;
export type WorkloadKind = (typeof workloadKinds)[number];

export const filterLimits = {
  matchLabels: 20,
  matchExpressions: 20,
  expressionValues: 50,
  environments: 20,
  environmentLength: 255,
  /** Kubernetes' own bounds: a label key's name part and a value 63, its prefix 253. */
  labelNameLength: 63,
  labelPrefixLength: 253,
} as const;

// Kubernetes' label syntax (k8s.io/apimachinery validation): a name of alphanumerics with - _ . inside,
// optionally after a DNS subdomain prefix and a slash; a value is empty or such a name.
export const labelNamePattern = "^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
const labelName = new RegExp(labelNamePattern);

/**
 * The same syntax with its lengths, as the API document states it for clients and validators: a key's
 * name part of 1–63 characters after an optional prefix of DNS labels (each 1–63); a value empty or
 * such a name. (The prefix's 253-character bound is checked by the service, not by the pattern.)
 */
export const labelKeyDocument = {
  pattern:
    "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$",
  maxLength: filterLimits.labelPrefixLength + 1 + filterLimits.labelNameLength,
};
export const labelValueDocument = {
  pattern: "^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$",
  maxLength: filterLimits.labelNameLength,
};
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a Kubernetes label key, or undefined when it is one. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf("/");
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (
    prefix !== undefined &&
    (prefix.length > filterLimits.labelPrefixLength || !dnsSubdomain.test(prefix))
  ) {
    return `its prefix must be a DNS subdomain of at most ${filterLimits.labelPrefixLength} characters (example.com/)`;
  }
  if (name.length > filterLimits.labelNameLength || !labelName.test(name)) {
    return (
      `its name must be 1–${filterLimits.labelNameLength} characters: letters, digits, '-', '_' and '.', ` +
      "starting and ending with a letter or digit"
    );
  }
  return undefined;
}

/** Whether `value` is a Kubernetes label value (empty, or a name of at most 63 characters). */
export const isLabelValue = (value: string): boolean =>
  value === "" || (value.length <= filterLimits.labelNameLength && labelName.test(value));

/** A tenant's text, quoted in a message only when short (a huge string is not echoed back). */
export const quoted = (text: string): string => (text.length <= 100 ? JSON.stringify(text) : "(a long text)");

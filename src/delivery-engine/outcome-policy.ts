/**
 * What the engine tells the feature that disables failing webhooks (webhooks/auto-disable.ts) when the
 * statement recording outcomes disabled some (sql/record-outcomes.sql applies the rule, so that a failure
 * and what it does to its webhook commit together, in the worker's round trip).
 */
export interface OutcomePolicy {
  /** Postgres NOTIFY channel told the ids of the webhooks disabled (comma-separated) when the statement commits. */
  disabledChannel: string;
  /** Called with the ids of the webhooks disabled once the statement has run. */
  onDisabled(webhookIds: number[]): void;
}

/**
 * A rule a webhook can opt into, applied to its outcomes inside the statement that records them
 * (follow-ups.ts): what the rule decides commits with the outcomes, in the same round trip. The engine
 * knows only this seam; the rule, its wording and the columns it keeps belong to the feature that hands
 * it in (the webhooks' auto-disable, webhooks/auto-disable.ts).
 */
export interface OutcomePolicy {
  /** A boolean SQL expression over the claimed row's webhook `w`: whether its outcomes are counted. */
  appliesTo: string;
  /**
   * CTEs, comma-separated, that read `recorded` (webhook_id, success, status_code, delivered_at, counted: the
   * outcome counts) and `policies` (id, enabled: the batch's webhooks, locked in id order), the last of them
   * `disabled (id)`: the webhooks this statement disabled.
   */
  ctes: string;
  /** Postgres NOTIFY channel told the ids in `disabled` (comma-separated) when the statement commits. */
  disabledChannel: string;
  /** Called with the ids in `disabled` once the statement has run. */
  onDisabled(webhookIds: number[]): void;
}

/**
 * Ready=False for a reason the user must fix: reported, not retried (a change to the resource, its
 * Secrets or its namespace re-triggers it). The message names what to fix and never quotes a secret.
 */
export class ConfigurationProblem extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

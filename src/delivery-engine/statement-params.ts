/**
 * The positional parameters of one statement composed from parts (record.ts, claim.ts, follow-ups.ts).
 * Each part adds the values it needs and writes the placeholder it gets back, so no part knows another's
 * parameter numbers. The parts are added in a fixed order, so a composed statement's text is the same on
 * every execution and can be prepared once.
 */
export class StatementParams {
  readonly values: unknown[] = [];

  /** Adds a value; returns its placeholder with the type cast, e.g. `$3::bigint[]`. */
  add(value: unknown, type: string): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }
}

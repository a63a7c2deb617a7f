import type { Logger } from "../logger.js";

/**
 * Connection failures of one role, logged once per episode: a warning when the first failure comes,
 * and one line when the database answers again, with how many failures there were and for how long.
 * A database out of reach fails every query and every connection attempt; one line each would bury
 * the log (and the line that says when it began).
 */
export class ConnectionEpisodes {
  private episode: { startedAt: number; failures: number } | undefined;

  constructor(
    private readonly role: string,
    private readonly logger: Logger | undefined,
  ) {}

  get failing(): boolean {
    return this.episode !== undefined;
  }

  failed(error: unknown): void {
    if (this.episode) {
      this.episode.failures += 1;
      return;
    }
    this.episode = { startedAt: Date.now(), failures: 1 };
    this.logger?.warn(
      { role: this.role, error: describe(error) },
      `database connections (${this.role}) failing; logged once until they recover`,
    );
  }

  answered(): void {
    if (!this.episode) return;
    const { startedAt, failures } = this.episode;
    this.episode = undefined;
    this.logger?.info(
      { role: this.role, failures, lastedMs: Date.now() - startedAt },
      `database connections (${this.role}) recovered`,
    );
  }
}

/** The message and code only: pg's connection errors name a host and a port, never the password. */
function describe(error: unknown): { message: string; code?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = "code" in error && typeof error.code === "string" ? error.code : undefined;
  return code ? { message: error.message, code } : { message: error.message };
}

import { TokenBuckets } from "../delivery-engine/token-buckets.js";
import { TooManyRequestsError } from "../errors.js";
import { metrics } from "../metrics.js";

// What a project's previews may cost (docs/api.md, Preview): a preview parses and renders on the
// template threads that every project's deliveries share, so a project gets a few at once and a pace,
// per replica, and a preview over either is answered 429 with Retry-After before anything is rendered.

/** The PREVIEWS_PER_PROJECT_* settings (app/config.ts). */
export interface PreviewSettings {
  /** Previews of one project rendering at once, per replica. */
  perProjectConcurrency: number;
  /** Token bucket per project and replica: this many, refilled over a minute; 0: no pace. */
  perProjectPerMinute: number;
}

export const defaultPreviewSettings: PreviewSettings = { perProjectConcurrency: 2, perProjectPerMinute: 120 };

/** A slot frees as soon as one of the previews holding it ends: ask again in a second. */
const inFlightRetryAfterSeconds = 1;

export class PreviewAdmission {
  private readonly byProject = new Map<number, number>();
  private readonly perMinute: TokenBuckets | undefined;

  constructor(private readonly settings: PreviewSettings) {
    const { perProjectPerMinute } = settings;
    this.perMinute = perProjectPerMinute > 0 ? new TokenBuckets(perProjectPerMinute, 60_000) : undefined;
  }

  /** Runs the project's preview within its share, or throws the 429 that says which bound and when. */
  async within<T>(projectId: number, preview: () => Promise<T>): Promise<T> {
    this.admit(projectId);
    this.byProject.set(projectId, (this.byProject.get(projectId) ?? 0) + 1);
    try {
      return await preview();
    } finally {
      const left = (this.byProject.get(projectId) ?? 1) - 1;
      if (left === 0) this.byProject.delete(projectId);
      else this.byProject.set(projectId, left);
    }
  }

  private admit(projectId: number): void {
    const { perProjectConcurrency, perProjectPerMinute } = this.settings;
    if ((this.byProject.get(projectId) ?? 0) >= perProjectConcurrency) {
      throw refused(
        "concurrency",
        `Project ${projectId} already has ${perProjectConcurrency} previews rendering on this replica, its share (PREVIEWS_PER_PROJECT_CONCURRENCY); try again when one has finished.`,
        inFlightRetryAfterSeconds,
      );
    }
    const waitMs = this.perMinute?.waitMs(projectId) ?? 0;
    if (waitMs > 0) {
      throw refused(
        "per-minute",
        `Project ${projectId} has made its ${perProjectPerMinute} previews per minute on this replica (PREVIEWS_PER_PROJECT_PER_MINUTE).`,
        Math.max(1, Math.ceil(waitMs / 1000)),
      );
    }
    this.perMinute?.take(projectId);
  }
}

function refused(limit: "concurrency" | "per-minute", message: string, retryAfterSeconds: number) {
  metrics.previewsRefused.inc({ limit });
  return new TooManyRequestsError(`${message} Retry after ${retryAfterSeconds} s.`, retryAfterSeconds);
}

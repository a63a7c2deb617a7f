import { exampleEnvelope, exampleRolloutDetails } from "../../../scripts/docs/format-examples.js";
import type { Envelope } from "../../../src/formats/envelope.js";
import type { RolloutDetails } from "../../../src/formats/rollout-details.js";
import type { PodProblem } from "../../../src/formats/rollout-failure.js";
import type { FormatInput } from "../../../src/formats/types.js";

// Events for the renderers' tests: the docs' example, every deployment event type, and a hostile one
// whose every text field tries mentions, links, markup and sizes far past every service's limits.

export const deploymentEventTypes = [
  "deployment.created",
  "deployment.ready",
  "deployment.succeeded",
  "deployment.failed",
  "deployment.cancelled",
] as const;

const statusOf = {
  "deployment.created": "pending",
  "deployment.ready": "ready",
  "deployment.succeeded": "succeeded",
  "deployment.failed": "failed",
  "deployment.cancelled": "cancelled",
} as const;

export function eventOf(eventType: (typeof deploymentEventTypes)[number]): Envelope {
  const base = exampleEnvelope(eventType === "deployment.failed" ? "failed" : "succeeded");
  const status = statusOf[eventType];
  return {
    ...base,
    event_type: eventType,
    payload: {
      ...base.payload,
      status,
      finished_at: status === "pending" || status === "ready" ? null : "2026-11-27T14:04:12.000Z",
    },
  };
}

/** Markup and mentions of every service, an astral character (a surrogate pair) and a long tail. */
const nasty =
  '<!channel> <!here> <@U024BE7LH> @everyone @here <users/all> [click](https://evil.example) **bold** &amp; "q" 🚀 {{DATE(2017-02-14T06:08:00Z)}} ';

export function hostileEnvelope(
  eventType: "deployment.succeeded" | "deployment.failed" = "deployment.failed",
): Envelope {
  const long = (n: number) => nasty.repeat(Math.ceil(n / nasty.length)).slice(0, n);
  const envelope: Envelope = {
    ...exampleEnvelope("failed"),
    event_type: eventType,
    payload: {
      deployment_id: 42,
      project_id: 3,
      project_name: long(5_000),
      environment: long(5_000),
      branch: long(5_000),
      commit_sha: long(500),
      commit_message: `${long(100_000)}\nsecond line <!channel>`,
      url: `https://shop.example.com/${"a".repeat(10_000)}`,
      status: long(300),
      error_message: `${'<&>"'.repeat(20_000)}\u202eevil\u0000`,
      started_at: "2026-11-27T14:02:51.000Z",
      finished_at: "2026-11-27T14:04:12.000Z",
    },
  };
  if (eventType === "deployment.failed") hostileRollouts.set(envelope, rolloutWithFailure(long));
  return envelope;
}

/** The rollout details of the hostile events: a failure whose every text is as hostile as theirs. */
const hostileRollouts = new WeakMap<Envelope, RolloutDetails>();

/** A renderer's input; a hostile event comes with its failure, so every limits test covers that section. */
export const inputOf = (envelope: Envelope, rollout?: RolloutDetails): FormatInput => ({
  envelope,
  template: null,
  templateContentType: null,
  rollout: rollout ?? hostileRollouts.get(envelope) ?? null,
});

/** Rollout details with `failure`, each text `fill(n)` of the longest the payload carries. */
export function rolloutWithFailure(fill: (n: number) => string): RolloutDetails {
  const problem = (i: number): PodProblem => ({
    pod: fill(253),
    container: i % 2 === 0 ? fill(63) : null,
    init_container: i === 1,
    reason: "CrashLoopBackOff",
    message: fill(500),
    exit_code: 137,
    restart_count: 12,
    termination_message: fill(500),
    log_tail: Array.from({ length: 100 }, () => fill(300)),
  });
  return {
    workload: { kind: "Deployment", name: "web", namespace: "shop", revision: "7" },
    changes: {
      images: [],
      previous_revision: null,
      change_cause: null,
      commit_sha: null,
      branch: null,
      metadata: {},
    },
    links: [],
    failure: {
      reason: "CrashLoopBackOff",
      message: fill(500),
      failed_early: true,
      problems: [0, 1, 2, 3, 4].map(problem),
      pods_with_problems: 40,
      problems_omitted: 60,
      warnings: Array.from({ length: 5 }, () => ({
        pod: fill(253),
        reason: fill(128),
        message: fill(500),
        count: 99,
        last_seen: "2026-11-27T14:04:00.000Z",
      })),
    },
  };
}

/** Every text field 5000 astral characters (4 bytes each in UTF-8): the worst case for a byte limit. */
export function astralEnvelope(): Envelope {
  const rockets = "🚀".repeat(5_000);
  const base = hostileEnvelope();
  const envelope: Envelope = {
    ...base,
    payload: {
      ...base.payload,
      project_name: rockets,
      environment: rockets,
      branch: rockets,
      commit_message: rockets,
      error_message: rockets,
      status: rockets,
    },
  };
  hostileRollouts.set(
    envelope,
    rolloutWithFailure((n) => "🚀".repeat(n)),
  );
  return envelope;
}

/** The docs' example details: an image changed, links configured (formats/rollout-details.ts). */
export const exampleDetails = exampleRolloutDetails;

/**
 * Details past every bound: 40 containers with long hostile images, 10 links (one not http, one too
 * long), and a failure whose every text is hostile too (the worst a failed event's card holds).
 */
export function hostileDetails(): RolloutDetails {
  const long = (n: number) => nasty.repeat(Math.ceil(n / nasty.length)).slice(0, n);
  return {
    workload: { kind: "StatefulSet", name: long(300), namespace: "shop", revision: "12" },
    changes: {
      images: Array.from({ length: 40 }, (_, i) => ({
        container: `${long(100)}${i}`,
        init: i % 2 === 0,
        before: long(2_000),
        after: `${long(2_000)}${i}`,
      })),
      previous_revision: "11",
      change_cause: long(5_000),
      commit_sha: long(500),
      branch: long(500),
      metadata: { "app.kubernetes.io/version": long(5_000) },
    },
    links: [
      { name: "script", url: "javascript:alert(1)" },
      ...Array.from({ length: 9 }, (_, i) => ({
        name: `${long(200)}${i}`,
        url: `https://grafana.example/${"a".repeat(i === 0 ? 2_900 : 950)}(${i})`,
      })),
    ],
    failure: rolloutWithFailure(long).failure,
  };
}

export const inputWithDetails = (envelope: Envelope, rollout: RolloutDetails): FormatInput => ({
  ...inputOf(envelope),
  rollout,
});

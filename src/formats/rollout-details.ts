// What a rollout event says beyond the deployment payload, for webhooks that opt in with
// `rollout_details: true` (docs/formats.md, "Rollout details"): which workload rolled out, what changed
// (images old → new, version and source labels), links to dashboards, and, on deployment.failed, what
// the pods report. Computed once when the event is recorded and stored with it (events.rollout_details),
// so replays and every replica send the same. Events without a cluster (test events) have none.

import type { RolloutFailure } from "./rollout-failure.js";

/**
 * The workload the rollout belongs to. `kind` is Deployment, StatefulSet or DaemonSet (kept a string
 * here, below the features that list the kinds); `revision` is the rollout's revision number, as text.
 */
export interface RolloutWorkload {
  kind: string;
  name: string;
  namespace: string;
  revision: string;
}

/** One container's image before and after the rollout; `before` is null for a container that is new. */
export interface ImageChange {
  container: string;
  /** True for an init container. */
  init: boolean;
  before: string | null;
  /** Null for a container the new revision dropped. */
  after: string | null;
}

/** The change-cause, commit and branch the payload reads from annotations, and the common tool labels. */
export interface RolloutChanges {
  /** Every container and init container of the new revision (and any the old one had), in spec order. */
  images: ImageChange[];
  /** The revision compared with; null for a workload's first revision, or one whose old is gone. */
  previous_revision: string | null;
  change_cause: string | null;
  commit_sha: string | null;
  branch: string | null;
  /** The labels and annotations found that name a version or source (docs/formats.md), by name. */
  metadata: Record<string, string>;
}

export interface RolloutLink {
  name: string;
  url: string;
}

/** Why a rollout failed, as its pods report it (deployment.failed only): rollout-failure.ts. */
export type { RolloutFailure };

/** The object carried as `payload.rollout`. */
export interface RolloutDetails {
  workload: RolloutWorkload;
  changes: RolloutChanges;
  links: RolloutLink[];
  failure?: RolloutFailure;
}

/**
 * The envelope's text with `payload.rollout` added, for a webhook that opted in. JSON.stringify of the
 * parsed text writes the same bytes as the original (it was written by JSON.stringify), so everything
 * but the added key stays as the default body has it.
 */
export function envelopeWithRollout(envelopeText: string, details: RolloutDetails): string {
  const envelope = JSON.parse(envelopeText) as { payload?: Record<string, unknown> };
  if (typeof envelope.payload !== "object" || envelope.payload === null) return envelopeText;
  envelope.payload.rollout = details;
  return JSON.stringify(envelope);
}

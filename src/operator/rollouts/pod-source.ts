import type { CoreV1Event, V1Pod } from "@kubernetes/client-node";

// What a rollout diagnosis reads, apart from how (pod-reads.ts asks the API server; tests read
// recorded objects), and the bounds of each read.

/** The new revision's pods: a label selector in one namespace, and a check of each pod's owner. */
export interface NewPods {
  namespace: string;
  labelSelector: string;
  owns(pod: V1Pod): boolean;
}

/**
 * At most this many pods are listed per look: the report names three and counts the others among these.
 * A page of 20 real pods (managedFields and all) is about 110 KiB of JSON, 0.35 MiB parsed
 * (bench/rollout-diagnosis.ts); eight reconciles at once hold a few MiB at worst.
 */
export const podsPerLook = 20;
/** Bytes of a container's log read at most (the last ROLLOUT_LOG_LINES lines of it). */
export const logBytes = 16 * 1024;

export type PodResource = "pods" | "events" | "pods/log";

/** What a diagnosis reads; undefined (or no events) where it may not. PodReads asks the API server. */
export interface PodSource {
  pods(selection: NewPods): Promise<V1Pod[] | undefined>;
  events(namespace: string, pod: string): Promise<CoreV1Event[]>;
  logTail(
    at: { namespace: string; pod: string; container: string; previous: boolean },
    lines: number,
  ): Promise<string[] | undefined>;
}

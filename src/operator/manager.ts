import type {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesListObject,
  KubernetesObject,
  NetworkingV1Api,
} from "@kubernetes/client-node";
import type { Pool } from "../db/pool.js";
import type { EventHandOver } from "../delivery-engine/engine.js";
import type { Logger } from "../logger.js";
import type { CacheTransform } from "./cache-transforms.js";
import { type ResilientInformer, resilientInformer } from "./informer.js";
import type { KubeGateway } from "./kube-gateway.js";
import type { DiagnosisSettings } from "./rollouts/rollout-diagnosis.js";
import type { LinkTemplate } from "./rollouts/rollout-links.js";
import type { WorkloadKind } from "./rollouts/workload-kinds.js";

/** The operator's settings (app/config.ts: leader election, namespaces, kinds, re-lists, status resync). */
export interface OperatorConfig {
  namespaceSelector: string;
  leaseNamespace: string;
  leaseName: string;
  identity: string | undefined;
  leaseDurationMs: number;
  leaderRetryPeriodMs: number;
  relistIntervalMs: number;
  webhookResyncIntervalMs: number;
  /** The kinds whose rollouts are watched (WATCH_WORKLOAD_KINDS). */
  workloadKinds: WorkloadKind[];
  /** Secrets Webhooks may use without the opt-in label (WEBHOOK_SECRETS_WITHOUT_LABEL; controllers/secret-opt-in.ts). */
  secretsWithoutLabel: readonly string[];
  /** What the operator reads of a stalled rollout's pods, and its fail-fast rule (rollouts/rollout-diagnosis.ts). */
  diagnosis: DiagnosisSettings;
  /** The links each rollout's details carry (ROLLOUT_LINKS; rollouts/rollout-links.ts). */
  rolloutLinks: readonly LinkTemplate[];
}

/**
 * What every controller is set up with while this replica leads (flux's Manager): the clients, the
 * database, the settings, and a way to make informers that re-list and restart alike.
 */
export interface ControllerManager {
  pool: Pool;
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  customObjects: CustomObjectsApi;
  networking: NetworkingV1Api;
  kube: KubeGateway;
  config: OperatorConfig;
  logger: Logger;
  /** Hands the deliveries of events it records to this replica's worker (emit.ts), when it runs one. */
  handOver?: EventHandOver;
  /**
   * An informer on `path`, filled by `list`. A list function is where a controller learns that it holds
   * a complete list: ListWatch.start() resolves even when its list failed, and an empty cache must never
   * read as "everything was deleted". `transform` says what its cache keeps of each object
   * (cache-transforms.ts); without it, all but managedFields and the last-applied annotation.
   */
  informer<T extends KubernetesObject>(
    resource: string,
    path: string,
    list: () => Promise<KubernetesListObject<T>>,
    transform?: CacheTransform<T>,
  ): ResilientInformer<T>;
}

/** A controller as the operator runs it: its watches started, stopped, and its queue drained (tests). */
export interface Controller {
  start(): Promise<void>;
  stop(): Promise<void>;
  idle(): Promise<void>;
}

export function controllerManager(parts: Omit<ControllerManager, "informer">): ControllerManager {
  return {
    ...parts,
    informer: (resource, path, list, transform) =>
      resilientInformer({
        kubeConfig: parts.kubeConfig,
        path,
        list,
        transform,
        resource,
        relistIntervalMs: parts.config.relistIntervalMs,
        logger: parts.logger,
      }),
  };
}

/** A work queue's key for an object: "namespace/name". */
export const objectKey = (object: { metadata?: { namespace?: string; name?: string } }) =>
  `${object.metadata?.namespace ?? ""}/${object.metadata?.name ?? ""}`;

/** Settings of every controller's work queue. */
export const queueSettings = { concurrency: 8, baseDelayMs: 500, maxDelayMs: 60_000 };

import { type CoordinationV1Api, type V1Lease, V1MicroTime } from "@kubernetes/client-node";
import { within } from "../abortable.js";
import { type Logger, logRetry } from "../logger.js";
import { isConflict, isNotFound } from "./kube-errors.js";

const renewDeadline = 2 / 3;

export interface LeaderElectionOptions {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  retryPeriodMs: number;
  logger: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

/**
 * Leader election on a coordination.k8s.io Lease, as client-go does it: the holder renews the lease
 * every retry period; others take it over once it has not changed for a lease duration. Writes carry
 * the resourceVersion read, so two candidates cannot both win (the loser gets 409). A leader that
 * cannot renew within the renew deadline (two thirds of the lease duration) stops leading at once,
 * before anyone else may start; every request is bounded by that deadline, so a request that hangs
 * cannot keep a leader leading.
 *
 * Expiry is judged by this replica's own clock only: by when it last saw the Lease change (its
 * resourceVersion), never by comparing the holder's renewTime with the local clock, which a skewed
 * clock on either side would get wrong.
 */
export class LeaderElector {
  private timer: NodeJS.Timeout | undefined;
  /** The tick in progress (resolves to whether it acquired or renewed the lease). */
  private ticking: Promise<boolean> = Promise.resolve(false);
  private leading = false;
  private lastRenewal = 0;
  private stopped = false;
  /** The Lease as last read (its resourceVersion), and when, by this replica's clock, it changed. */
  private observed: { version: string; at: number } | undefined;

  constructor(private readonly options: LeaderElectionOptions) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.ticking = this.tick();
  }

  /** Stops campaigning; a leader releases the lease so another replica takes over without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A renewal in flight finishes first: it must not make this instance lead again after stop(), nor
    // write the lease between the release's read and write (the release would fail with 409 and the
    // lease stay held until it expires).
    const acquired = await this.ticking;
    if (this.leading || acquired) {
      this.setLeading(false);
      await this.release().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, "releasing the lease failed"),
      );
    }
  }

  private async tick(): Promise<boolean> {
    if (this.stopped) return false;
    try {
      const acquired = await this.tryAcquireOrRenew();
      // stop() was called meanwhile and waits for this tick: it releases the lease if this tick got it.
      if (this.stopped) return acquired;
      if (acquired) this.lastRenewal = Date.now();
      this.setLeading(acquired);
    } catch (error) {
      if (this.stopped) return false;
      logRetry(this.options.logger, error, { lease: this.options.name }, "lease update failed");
      // Give up before the lease can expire for the others (client-go's renew deadline), so two
      // replicas never lead at once.
      if (this.leading && Date.now() - this.lastRenewal >= renewDeadline * this.options.leaseDurationMs) {
        this.setLeading(false);
      }
    }
    if (!this.stopped) {
      this.timer = setTimeout(() => {
        this.ticking = this.tick();
      }, this.options.retryPeriodMs);
      this.timer.unref();
    }
    return this.leading;
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.options.logger.info(
      { identity: this.options.identity, lease: this.options.name },
      leading ? "became leader" : "stopped leading",
    );
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  private get requestTimeoutMs(): number {
    return Math.max(100, Math.floor(renewDeadline * this.options.leaseDurationMs));
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    const timeout = this.requestTimeoutMs;
    const api = {
      read: (request: { name: string; namespace: string }) =>
        within(this.options.api.readNamespacedLease(request), timeout, "reading the Lease"),
      create: (request: { namespace: string; body: V1Lease }) =>
        within(this.options.api.createNamespacedLease(request), timeout, "creating the Lease"),
      replace: (request: { name: string; namespace: string; body: V1Lease }) =>
        within(this.options.api.replaceNamespacedLease(request), timeout, "renewing the Lease"),
    };
    // Lease times are metav1.MicroTime: the API server wants exactly six fractional digits, which a
    // plain Date does not serialize to.
    const now = new V1MicroTime();
    const leaseDurationSeconds = Math.ceil(this.options.leaseDurationMs / 1000);
    let lease: V1Lease;
    try {
      lease = await api.read({ name, namespace });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await api.create({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
        });
        return true;
      } catch (createError) {
        if (isConflict(createError)) return false;
        throw createError;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity;
    const version = lease.metadata?.resourceVersion ?? "";
    const seenAt = Date.now();
    if (this.observed?.version !== version) this.observed = { version, at: seenAt };
    const expired = this.observed.at + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 < seenAt;
    if (holder && holder !== identity && !expired) return false;
    const takingOver = holder !== identity;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: now,
      ...(takingOver ? { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
    };
    try {
      await api.replace({ name, namespace, body: lease });
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  private async release(): Promise<void> {
    const { api, namespace, name, identity } = this.options;
    const lease = await within(
      api.readNamespacedLease({ name, namespace }),
      this.requestTimeoutMs,
      "reading the Lease",
    );
    if (lease.spec?.holderIdentity !== identity) return;
    lease.spec = {
      ...lease.spec,
      holderIdentity: undefined,
      leaseDurationSeconds: 1,
      renewTime: new V1MicroTime(0),
    };
    await within(
      api.replaceNamespacedLease({ name, namespace, body: lease }),
      this.requestTimeoutMs,
      "releasing the Lease",
    );
  }
}

import type { Logger } from 'pino';
import { sleep } from './backoff.ts';
import { isConflict, isNotFound, type KubeClient } from './kube-client.ts';
import { LEASES, resourcePath } from './resources.ts';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** Unique per replica: the pod name plus a random suffix. */
  identity: string;
  /** How long a lease holds without renewal (client-go's default: 15 s). */
  leaseDurationMs: number;
  /** The leader gives up when it could not renew for this long (10 s); shorter than the lease. */
  renewDeadlineMs: number;
  /** Pause between tries, for candidates and for the leader's renewals (2 s). */
  retryPeriodMs: number;
  logger: Logger;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
interface Lease {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

/** metav1.MicroTime wants exactly six fractional digits. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** How one try at the Lease ended: this replica holds it, another holder has it, or the call failed. */
type Outcome = 'held' | 'taken' | 'failed';

/**
 * Leader election on a coordination.k8s.io Lease, after client-go's: a candidate takes the lease when
 * it is free or its holder has not renewed it for a lease duration, measured on the candidate's own
 * clock from when it last saw the record change (so clock skew between replicas does not matter);
 * writes use the resourceVersion, so of two candidates one wins.
 *
 * The leader renews every retry period. Every Lease call has a deadline: a renewal may take at most
 * what is left of the renew deadline, counted from the START of the last renewal that succeeded (the
 * write reached the server after that instant, so every other replica saw it no earlier: when the
 * leader gives up at start + renewDeadline, no candidate can have taken over, since they wait a lease
 * duration from what they saw, and renewDeadline < leaseDuration). It steps down the moment the Lease
 * names another holder, or the renew deadline passes. On shutdown it releases the lease so another
 * replica takes over at once.
 */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #o: LeaderElectionOptions;
  readonly #path: string;
  #observed = '';
  #observedAt = 0;
  #leading = false;
  /** Start time of the last successful acquire or renew (the leader's own clock). */
  #renewedAt = 0;

  constructor(client: KubeClient, options: LeaderElectionOptions) {
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = options;
    // client-go's checks: the leader must give up before a candidate may take over, and must get
    // more than one try (with jitter) within its deadline.
    if (!(leaseDurationMs > renewDeadlineMs))
      throw new Error(
        `leader election: the lease duration (${leaseDurationMs} ms) must exceed the renew deadline (${renewDeadlineMs} ms)`,
      );
    if (!(renewDeadlineMs > retryPeriodMs * 1.2))
      throw new Error(
        `leader election: the renew deadline (${renewDeadlineMs} ms) must exceed 1.2 × the retry period (${retryPeriodMs} ms)`,
      );
    if (!(retryPeriodMs > 0)) throw new Error('leader election: the retry period must be positive');
    this.#client = client;
    this.#o = options;
    this.#path = resourcePath(LEASES, options.namespace, options.name);
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** Waits until this replica holds the lease (true) or `signal` aborts (false). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      const started = Date.now();
      // A candidate's try is bounded too: a hung connection must not keep it from trying again.
      const outcome = await this.#tryAcquireOrRenew(
        AbortSignal.any([signal, AbortSignal.timeout(this.#o.renewDeadlineMs)]),
      );
      if (outcome === 'held' && !signal.aborted) {
        this.#leading = true;
        this.#renewedAt = started;
        this.#o.logger.info({ identity: this.#o.identity, lease: this.#o.name }, 'became leader');
        return true;
      }
      await sleep(this.#o.retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    return false;
  }

  /**
   * Renews until leadership is lost (resolves with why: the renew deadline passed, or another holder
   * took the Lease) or `signal` aborts (resolves with 'stopped'). The caller must stop acting at once.
   */
  async holdUntilLost(signal: AbortSignal): Promise<'deadline' | 'taken' | 'stopped'> {
    const { renewDeadlineMs, retryPeriodMs, identity, logger } = this.#o;
    const lost = (why: 'deadline' | 'taken') => {
      this.#leading = false;
      logger.warn(
        { identity, why, sinceLastRenewalMs: Date.now() - this.#renewedAt },
        why === 'taken'
          ? 'leadership lost: another replica holds the lease'
          : 'leadership lost: could not renew the lease within the renew deadline',
      );
      return why;
    };
    while (!signal.aborted) {
      const left = () => this.#renewedAt + renewDeadlineMs - Date.now();
      await sleep(Math.min(retryPeriodMs, Math.max(0, left())), signal);
      if (signal.aborted) break;
      if (left() <= 0) return lost('deadline');
      const started = Date.now();
      const outcome = await this.#tryAcquireOrRenew(AbortSignal.any([signal, AbortSignal.timeout(left())]));
      if (signal.aborted) break;
      if (outcome === 'held') this.#renewedAt = started;
      else if (outcome === 'taken') return lost('taken');
      else if (left() <= 0) return lost('deadline');
    }
    return 'stopped';
  }

  /** Gives the lease up if this replica holds it (empty holder, so the next candidate need not wait). */
  async release(): Promise<void> {
    if (!this.#leading) return;
    this.#leading = false;
    try {
      const signal = AbortSignal.timeout(this.#o.renewDeadlineMs);
      const lease = await this.#client.get<Lease>(this.#path, undefined, { signal });
      if (lease.spec.holderIdentity !== this.#o.identity) return;
      const now = Date.now();
      lease.spec = {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: microTime(now),
        acquireTime: microTime(now),
      };
      await this.#client.replace(this.#path, lease, { signal });
      this.#o.logger.info({ identity: this.#o.identity }, 'lease released');
    } catch (err) {
      this.#o.logger.warn({ err: (err as Error).message }, 'could not release the lease');
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<Outcome> {
    const { identity, leaseDurationMs, namespace, name } = this.#o;
    const now = Date.now();
    const fresh: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      const lease = await this.#client.getOrNull<Lease>(this.#path, { signal });
      if (!lease) {
        const created = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: fresh,
        };
        await this.#client.create(resourcePath(LEASES, namespace), created, { signal });
        this.#see(fresh, Date.now());
        return 'held';
      }
      const record = lease.spec ?? {};
      const seen = JSON.stringify(record);
      if (seen !== this.#observed) this.#see(record, Date.now());
      const holder = record.holderIdentity ?? '';
      const duration = (record.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== identity && this.#observedAt + duration > Date.now()) return 'taken';
      const mine = holder === identity;
      lease.spec = {
        ...fresh,
        acquireTime: mine ? (record.acquireTime ?? fresh.acquireTime) : fresh.acquireTime,
        leaseTransitions: (record.leaseTransitions ?? 0) + (mine ? 0 : 1),
      };
      await this.#client.replace(this.#path, lease, { signal });
      this.#see(lease.spec, Date.now());
      return 'held';
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) {
        this.#o.logger.warn({ err: (err as Error).message }, 'lease update failed');
      }
      return 'failed';
    }
  }

  #see(record: LeaseSpec, at: number) {
    this.#observed = JSON.stringify(record);
    this.#observedAt = at;
  }
}

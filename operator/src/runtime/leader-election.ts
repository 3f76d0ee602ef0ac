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

/**
 * Leader election on a coordination.k8s.io Lease, after client-go's: a candidate takes the lease when
 * it is free or its holder has not renewed it for a lease duration, measured on the candidate's own
 * clock from when it last saw the record change (so clock skew between replicas does not matter);
 * writes use the resourceVersion, so of two candidates one wins. The leader renews every retry period
 * and steps down when it could not renew within the renew deadline; on shutdown it releases the lease
 * so another replica takes over at once.
 */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #o: LeaderElectionOptions;
  readonly #path: string;
  #observed = '';
  #observedAt = 0;
  #leading = false;

  constructor(client: KubeClient, options: LeaderElectionOptions) {
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
      if (await this.#tryAcquireOrRenew()) {
        this.#leading = true;
        this.#o.logger.info({ identity: this.#o.identity, lease: this.#o.name }, 'became leader');
        return true;
      }
      await sleep(this.#o.retryPeriodMs * (1 + Math.random() * 0.2), signal);
    }
    return false;
  }

  /** Renews until renewal fails for the renew deadline (resolves: leadership lost) or `signal` aborts. */
  async holdUntilLost(signal: AbortSignal): Promise<void> {
    let renewedAt = Date.now();
    while (!signal.aborted) {
      await sleep(this.#o.retryPeriodMs, signal);
      if (signal.aborted) return;
      if (await this.#tryAcquireOrRenew()) {
        renewedAt = Date.now();
      } else if (Date.now() - renewedAt >= this.#o.renewDeadlineMs) {
        this.#leading = false;
        this.#o.logger.warn({ identity: this.#o.identity }, 'leadership lost: could not renew the lease');
        return;
      }
    }
  }

  /** Gives the lease up if this replica holds it (empty holder, so the next candidate need not wait). */
  async release(): Promise<void> {
    if (!this.#leading) return;
    this.#leading = false;
    try {
      const lease = await this.#client.get<Lease>(this.#path);
      if (lease.spec.holderIdentity !== this.#o.identity) return;
      const now = Date.now();
      lease.spec = {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: microTime(now),
        acquireTime: microTime(now),
      };
      await this.#client.replace(this.#path, lease);
      this.#o.logger.info({ identity: this.#o.identity }, 'lease released');
    } catch (err) {
      this.#o.logger.warn({ err: (err as Error).message }, 'could not release the lease');
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
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
      const lease = await this.#client.getOrNull<Lease>(this.#path);
      if (!lease) {
        const created = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: fresh,
        };
        await this.#client.create(resourcePath(LEASES, namespace), created);
        this.#see(fresh, now);
        return true;
      }
      const record = lease.spec ?? {};
      const seen = JSON.stringify(record);
      if (seen !== this.#observed) this.#see(record, now);
      const holder = record.holderIdentity ?? '';
      const duration = (record.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== identity && this.#observedAt + duration > now) return false;
      const mine = holder === identity;
      lease.spec = {
        ...fresh,
        acquireTime: mine ? (record.acquireTime ?? fresh.acquireTime) : fresh.acquireTime,
        leaseTransitions: (record.leaseTransitions ?? 0) + (mine ? 0 : 1),
      };
      await this.#client.replace(this.#path, lease);
      this.#see(lease.spec, now);
      return true;
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) {
        this.#o.logger.warn({ err: (err as Error).message }, 'lease update failed');
      }
      return false;
    }
  }

  #see(record: LeaseSpec, at: number) {
    this.#observed = JSON.stringify(record);
    this.#observedAt = at;
  }
}

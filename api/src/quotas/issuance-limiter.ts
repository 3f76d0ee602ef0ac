import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import type { Plan } from '../apps/plans.ts';

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };
type Rate = Plan['issuance'];

/** Idle buckets are forgotten (and their Redis keys expire) after this long; a full refill takes seconds. */
const IDLE_TIMEOUT_MS = 60_000;
const REFILL_INTERVAL_MS = 1000;

/**
 * Per-app token buckets for server-token issuance: `burst` units, `perSecond` more every second. Local
 * by default; with a Redis client every instance draws from the same buckets (Bottleneck's Redis
 * datastore). A rate limit answers at once: it never queues callers.
 */
export class IssuanceLimiter {
  readonly #local = new LocalBuckets();
  readonly #groups = new Map<string, Bottleneck.Group>();
  readonly #connection: Bottleneck.IORedisConnection | undefined;

  constructor(redis?: Redis) {
    this.#connection = redis ? new Bottleneck.IORedisConnection({ client: redis as never }) : undefined;
  }

  async take(appId: string, rate: Rate): Promise<LimitDecision> {
    const allowed = this.#connection
      ? await drawShared(this.#group(rate).key(appId), rate.burst)
      : this.#local.take(`${rate.perSecond}-${rate.burst}-${appId}`, rate);
    return allowed
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(1 / rate.perSecond)) };
  }

  #group(rate: Rate): Bottleneck.Group {
    const id = `gatehouse-issuance-${rate.perSecond}-${rate.burst}`;
    let group = this.#groups.get(id);
    if (!group) {
      group = new Bottleneck.Group({
        id,
        timeout: IDLE_TIMEOUT_MS,
        reservoir: rate.burst,
        reservoirIncreaseAmount: rate.perSecond,
        reservoirIncreaseInterval: REFILL_INTERVAL_MS,
        reservoirIncreaseMaximum: rate.burst,
        datastore: 'ioredis',
        connection: this.#connection,
        clearDatastore: false,
      });
      this.#groups.set(id, group);
    }
    return group;
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.#groups.values()].flatMap((g) => g.limiters().map(({ limiter }) => limiter.disconnect(false))),
    );
    await this.#connection?.disconnect(false);
  }
}

/**
 * Shared bucket in Redis. Bottleneck's `schedule` is unsafe here: its capacity check and its registration
 * are two scripts, so another instance can take the last unit in between, and the job then waits in the
 * queue for the next refill while every later call queues behind it (seconds). Instead: 1. draw one unit
 * in one script (which applies the refill first), 2. a draw that a refill capped at the maximum was
 * absorbed by it: draw again, 3. a draw that overdrew the bucket is given back, so refused callers never
 * eat later refills.
 */
async function drawShared(limiter: Bottleneck, burst: number): Promise<boolean> {
  let left = await limiter.incrementReservoir(-1);
  if (left >= burst) left = await limiter.incrementReservoir(-1);
  if (left >= 0) return true;
  await limiter.incrementReservoir(1);
  return false;
}

/**
 * In-process buckets with the same refill rule as the shared ones, computed when used: no timers and no
 * waiting (Bottleneck's local datastore yields to a timer several times per job and serialises jobs per
 * key, which capped one app at a few hundred issues per second). Idle buckets are full, so forgetting
 * them changes nothing.
 */
export class LocalBuckets {
  readonly #buckets = new Map<string, { units: number; refilledAt: number; usedAt: number }>();
  #sweptAt = 0;

  take(key: string, rate: Rate, now = Date.now()): boolean {
    this.#sweep(now);
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = { units: rate.burst, refilledAt: now, usedAt: now };
      this.#buckets.set(key, bucket);
    }
    const intervals = Math.floor((now - bucket.refilledAt) / REFILL_INTERVAL_MS);
    if (intervals > 0) {
      bucket.units = Math.min(rate.burst, bucket.units + intervals * rate.perSecond);
      bucket.refilledAt += intervals * REFILL_INTERVAL_MS;
    }
    bucket.usedAt = now;
    if (bucket.units < 1) return false;
    bucket.units -= 1;
    return true;
  }

  #sweep(now: number): void {
    if (now - this.#sweptAt < IDLE_TIMEOUT_MS) return;
    this.#sweptAt = now;
    for (const [key, bucket] of this.#buckets) {
      if (now - bucket.usedAt > IDLE_TIMEOUT_MS) this.#buckets.delete(key);
    }
  }
}

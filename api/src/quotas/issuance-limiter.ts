import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import type { Plan } from '../apps/plans.ts';

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Idle buckets are forgotten (and their Redis keys expire) after this long; a full refill takes seconds. */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * Per-app token buckets for server-token issuance, one Bottleneck group per plan rate. Local by default;
 * with a Redis client every instance draws from the same buckets. A rate limit answers at once: it never
 * queues callers.
 */
export class IssuanceLimiter {
  readonly #groups = new Map<string, Bottleneck.Group>();
  readonly #connection: Bottleneck.IORedisConnection | undefined;

  constructor(redis?: Redis) {
    this.#connection = redis ? new Bottleneck.IORedisConnection({ client: redis as never }) : undefined;
  }

  async take(appId: string, rate: Plan['issuance']): Promise<LimitDecision> {
    const limiter = this.#group(rate).key(appId);
    const allowed = this.#connection ? await drawShared(limiter, rate.burst) : await drawLocal(limiter);
    return allowed
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(1 / rate.perSecond)) };
  }

  #group(rate: Plan['issuance']): Bottleneck.Group {
    const id = `gatehouse-issuance-${rate.perSecond}-${rate.burst}`;
    let group = this.#groups.get(id);
    if (!group) {
      group = new Bottleneck.Group({
        id,
        timeout: IDLE_TIMEOUT_MS,
        reservoir: rate.burst,
        reservoirIncreaseAmount: rate.perSecond,
        reservoirIncreaseInterval: 1000,
        reservoirIncreaseMaximum: rate.burst,
        highWater: 0,
        strategy: Bottleneck.strategy.OVERFLOW,
        ...(this.#connection
          ? { datastore: 'ioredis', connection: this.#connection, clearDatastore: false }
          : {}),
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
 * One process owns the bucket: a job that finds no capacity is dropped (highWater 0 + OVERFLOW), and one
 * that finds capacity runs in the same step, so nothing ever waits.
 */
async function drawLocal(limiter: Bottleneck): Promise<boolean> {
  try {
    await limiter.schedule(async () => undefined);
    return true;
  } catch (error) {
    if (error instanceof Bottleneck.BottleneckError) return false;
    throw error;
  }
}

/**
 * Shared bucket in Redis. `schedule` is unsafe here: its capacity check and its registration are two
 * scripts, so another instance can take the last unit in between, and the job then waits in the queue for
 * the next refill while every later call queues behind it. Instead: 1. draw one unit in one script (which
 * applies the refill first), 2. a draw that a refill capped at the maximum was absorbed by it: draw again,
 * 3. a draw that overdrew the bucket is given back, so refused callers never eat later refills.
 */
async function drawShared(limiter: Bottleneck, burst: number): Promise<boolean> {
  let left = await limiter.incrementReservoir(-1);
  if (left >= burst) left = await limiter.incrementReservoir(-1);
  if (left >= 0) return true;
  await limiter.incrementReservoir(1);
  return false;
}

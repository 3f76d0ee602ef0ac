import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import type { Plan } from '../apps/plans.ts';

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Per-app token buckets for server-token issuance, one Bottleneck group per plan rate. Local by default;
 * with a Redis client every instance draws from the same buckets. A job that would have to wait is
 * dropped instead (highWater 0 + OVERFLOW): a rate limit answers at once, it never queues callers.
 */
export class IssuanceLimiter {
  readonly #groups = new Map<string, Bottleneck.Group>();
  readonly #connection: Bottleneck.IORedisConnection | undefined;

  constructor(redis?: Redis) {
    this.#connection = redis ? new Bottleneck.IORedisConnection({ client: redis as never }) : undefined;
  }

  async take(appId: string, rate: Plan['issuance']): Promise<LimitDecision> {
    const limiter = this.#group(rate).key(appId);
    try {
      await limiter.schedule(async () => undefined);
      return { allowed: true };
    } catch (error) {
      if (error instanceof Bottleneck.BottleneckError) {
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(1 / rate.perSecond)) };
      }
      throw error;
    }
  }

  #group(rate: Plan['issuance']): Bottleneck.Group {
    const id = `gatehouse-issuance-${rate.perSecond}-${rate.burst}`;
    let group = this.#groups.get(id);
    if (!group) {
      group = new Bottleneck.Group({
        id,
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

/**
 * Where `offline_` tokens and the standby's challenges are marked used. Shared by both `fallbackapiv1.`
 * hosts, both `bypass.` hosts and the main API, so a token is accepted once across all of them and across
 * the main API's recovery. Production: Redis (the standby's own, so it outlives the main database).
 * One process (local runs): memory.
 */
export type ConsumeResult = 'consumed' | 'already_used' | 'same_retry';

export interface ConsumptionStore {
  /** Marks `id` used for `ttlSeconds`; a retry carrying the same idempotency key is recognised as such. */
  consumeOnce(id: string, ttlSeconds: number, idempotencyKey?: string): Promise<ConsumeResult>;
  /** Counts one more attempt at `id` and returns the count. */
  countAttempt(id: string, ttlSeconds: number): Promise<number>;
  /** Throws when the store cannot be reached: callers fail closed. */
  ping(): Promise<void>;
}

/** The subset of ioredis this module needs, so core does not depend on a Redis client. */
export interface RedisLike {
  set(key: string, value: string, ex: 'EX', seconds: number, nx: 'NX'): Promise<'OK' | null>;
  get(key: string): Promise<string | null>;
  incr(key: string): Promise<number>;
  expire(key: string, seconds: number): Promise<number>;
  ping(): Promise<string>;
}

const NO_KEY = '-';
/** How long after the first use a retry with the same idempotency key is recognised (as for `pt_`). */
export const RETRY_WINDOW_MS = 60_000;

/** The stored value: the idempotency key and when the token was used, so retries are recognised only briefly. */
function holder(idempotencyKey: string | undefined, now = Date.now()): string {
  return `${now}|${idempotencyKey ?? NO_KEY}`;
}
function isSameRetry(
  stored: string | null | undefined,
  idempotencyKey: string | undefined,
  now = Date.now(),
): boolean {
  if (idempotencyKey === undefined || !stored) return false;
  const bar = stored.indexOf('|');
  return stored.slice(bar + 1) === idempotencyKey && now - Number(stored.slice(0, bar)) < RETRY_WINDOW_MS;
}

export class RedisConsumptionStore implements ConsumptionStore {
  readonly #redis: RedisLike;
  readonly #prefix: string;

  constructor(redis: RedisLike, prefix = 'gatehouse:offline:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async consumeOnce(id: string, ttlSeconds: number, idempotencyKey?: string): Promise<ConsumeResult> {
    const key = `${this.#prefix}used:${id}`;
    const set = await this.#redis.set(key, holder(idempotencyKey), 'EX', Math.max(1, ttlSeconds), 'NX');
    if (set === 'OK') return 'consumed';
    return isSameRetry(await this.#redis.get(key), idempotencyKey) ? 'same_retry' : 'already_used';
  }

  async countAttempt(id: string, ttlSeconds: number): Promise<number> {
    const key = `${this.#prefix}attempts:${id}`;
    const count = await this.#redis.incr(key);
    if (count === 1) await this.#redis.expire(key, Math.max(1, ttlSeconds));
    return count;
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }
}

export class MemoryConsumptionStore implements ConsumptionStore {
  readonly #used = new Map<string, { holder: string; until: number }>();
  readonly #attempts = new Map<string, { count: number; until: number }>();

  async consumeOnce(id: string, ttlSeconds: number, idempotencyKey?: string): Promise<ConsumeResult> {
    this.#sweep();
    const held = this.#used.get(id);
    if (held) return isSameRetry(held.holder, idempotencyKey) ? 'same_retry' : 'already_used';
    this.#used.set(id, { holder: holder(idempotencyKey), until: Date.now() + ttlSeconds * 1000 });
    return 'consumed';
  }

  async countAttempt(id: string, ttlSeconds: number): Promise<number> {
    this.#sweep();
    const entry = this.#attempts.get(id) ?? { count: 0, until: Date.now() + ttlSeconds * 1000 };
    entry.count += 1;
    this.#attempts.set(id, entry);
    return entry.count;
  }

  async ping(): Promise<void> {}

  #sweep() {
    if (this.#used.size + this.#attempts.size < 10_000) return;
    const now = Date.now();
    for (const [k, v] of this.#used) if (v.until < now) this.#used.delete(k);
    for (const [k, v] of this.#attempts) if (v.until < now) this.#attempts.delete(k);
  }
}

import type { Redis } from 'ioredis';

/**
 * Counts events per key over a sliding window, a minute unless told (two fixed windows, the previous one
 * weighted by overlap).
 */
export interface VelocityCounter {
  /** Records one event for every key and returns each key's count over the window, in order. */
  hit(keys: readonly string[], now?: number): Promise<number[]>;
  /**
   * The same without a promise, where the counts live in this process: the risk engine takes it when offered
   * (each await on an init's path costs CPU that a synchronous answer does not).
   */
  hitNow?(keys: readonly string[], now?: number): number[];
  /** A counter of the same kind (this process, or the same Redis) over another window length. */
  withWindow?(windowMs: number): VelocityCounter;
}

const MINUTE_MS = 60_000;

function slide(current: number, previous: number, now: number, windowMs: number): number {
  const elapsed = (now % windowMs) / windowMs;
  return current + previous * (1 - elapsed);
}

/** One process's counts. Right for one instance; with several, each sees its share (use Redis). */
export class MemoryVelocity implements VelocityCounter {
  readonly #counts = new Map<string, { window: number; current: number; previous: number }>();
  readonly #maxKeys: number;
  readonly #windowMs: number;

  constructor(maxKeys = 200_000, windowMs = MINUTE_MS) {
    this.#maxKeys = maxKeys;
    this.#windowMs = windowMs;
  }

  withWindow(windowMs: number): MemoryVelocity {
    return new MemoryVelocity(this.#maxKeys, windowMs);
  }

  async hit(keys: readonly string[], now = Date.now()): Promise<number[]> {
    return this.hitNow(keys, now);
  }

  hitNow(keys: readonly string[], now = Date.now()): number[] {
    const window = Math.floor(now / this.#windowMs);
    if (this.#counts.size > this.#maxKeys) this.#evict();
    return keys.map((key) => {
      let entry = this.#counts.get(key);
      if (!entry || entry.window < window - 1) entry = { window, current: 0, previous: 0 };
      else if (entry.window === window - 1) entry = { window, current: 0, previous: entry.current };
      entry.current += 1;
      // Moved to the end: the map's order is the order of last hits, so eviction starts with the idlest.
      this.#counts.delete(key);
      this.#counts.set(key, entry);
      return slide(entry.current, entry.previous, now, this.#windowMs);
    });
  }

  /**
   * Full (many sources, or an attack spraying keys): the least recently hit tenth is forgotten. A source
   * that keeps sending keeps its count, so spraying new keys cannot wipe the count of the source pressing
   * an app; what goes is what was quiet longest.
   */
  #evict() {
    let excess = this.#counts.size - Math.floor(this.#maxKeys * 0.9);
    for (const key of this.#counts.keys()) {
      if (excess-- <= 0) break;
      this.#counts.delete(key);
    }
  }
}

/** Counts shared by every instance through Redis: one round trip per call, keys expire on their own. */
export class RedisVelocity implements VelocityCounter {
  readonly #redis: Redis;
  readonly #windowMs: number;
  /** Key prefix: a window other than the minute has its own, so equal key names never share a count. */
  readonly #prefix: string;

  constructor(redis: Redis, windowMs = MINUTE_MS) {
    this.#redis = redis;
    this.#windowMs = windowMs;
    this.#prefix = windowMs === MINUTE_MS ? 'gatehouse:vel:' : `gatehouse:vel${windowMs}:`;
  }

  withWindow(windowMs: number): RedisVelocity {
    return new RedisVelocity(this.#redis, windowMs);
  }

  async hit(keys: readonly string[], now = Date.now()): Promise<number[]> {
    const windowMs = this.#windowMs;
    const window = Math.floor(now / windowMs);
    const pipeline = this.#redis.multi();
    for (const key of keys) {
      const current = `${this.#prefix}${key}:${window}`;
      pipeline
        .incr(current)
        .pexpire(current, windowMs * 2)
        .get(`${this.#prefix}${key}:${window - 1}`);
    }
    const results = (await pipeline.exec()) ?? [];
    return keys.map((_, i) => {
      const current = Number(results[i * 3]?.[1] ?? 0);
      const previous = Number(results[i * 3 + 2]?.[1] ?? 0);
      return slide(current, previous, now, windowMs);
    });
  }
}

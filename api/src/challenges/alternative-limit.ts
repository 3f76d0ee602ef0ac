import type { Redis } from 'ioredis';

const HOUR_MS = 3_600_000;

/**
 * Counts accessible alternatives per client address over a fixed hour: Redis when configured (every instance
 * shares one count), else this process's memory (bounded: an attack spraying addresses clears it rather
 * than growing it).
 */
export class AlternativeCounter {
  readonly #redis: Redis | undefined;
  readonly #local = new Map<string, { hour: number; count: number }>();

  constructor(redis?: Redis) {
    this.#redis = redis;
  }

  /** Records one alternative for `ip` and returns how many it took this hour, this one included. */
  async take(ip: string, now = Date.now()): Promise<number> {
    const hour = Math.floor(now / HOUR_MS);
    if (this.#redis) {
      const key = `gatehouse:alt:${ip}:${hour}`;
      const replies = await this.#redis.multi().incr(key).pexpire(key, HOUR_MS).exec();
      return Number(replies?.[0]?.[1] ?? 1);
    }
    if (this.#local.size > 100_000) this.#local.clear();
    const entry = this.#local.get(ip);
    const count = entry && entry.hour === hour ? entry.count + 1 : 1;
    this.#local.set(ip, { hour, count });
    return count;
  }
}

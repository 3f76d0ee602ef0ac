import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Where standby processes that probe the same main API tell each other they have seen it down. Each
 * process probes on its own clock, so for up to a few probe intervals one of them can be serving (and
 * minting `offline_` tokens) while another still answers `service_online`: a backend that then takes
 * such a token to a fallback host that has not yet seen the outage would be refused. With the board, a
 * process that still believes the main API is up serves anyway while a peer's declaration is fresh, and
 * a process that sees the main API back withdraws its own at once.
 */
export interface OutageBoard {
  /** `by` declares the main API down for `ttlMs` (refreshed on every failed probe while it lasts). */
  declare(by: string, ttlMs: number): Promise<void>;
  /** `by` sees the main API up again: its declaration ends now, not when it would lapse. */
  withdraw(by: string): Promise<void>;
  /** Whether some process's declaration is still fresh. */
  declared(): Promise<boolean>;
}

/** One process's board: right when every role runs in one process, and for tests. */
export class MemoryOutageBoard implements OutageBoard {
  readonly #until = new Map<string, number>();

  async declare(by: string, ttlMs: number): Promise<void> {
    this.#until.set(by, Date.now() + ttlMs);
  }

  async withdraw(by: string): Promise<void> {
    this.#until.delete(by);
  }

  async declared(): Promise<boolean> {
    const now = Date.now();
    for (const until of this.#until.values()) if (until > now) return true;
    return false;
  }
}

/**
 * The board in the standby's shared store (Redis): one sorted set per main API URL, each declaring
 * process a member scored by when its declaration lapses (the hosts' clocks: skew of a second moves
 * a lapse by a second). The key itself expires with the last declaration.
 */
export class RedisOutageBoard implements OutageBoard {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(redis: Redis, mainApiUrl: string, prefix = 'gatehouse:standby:outage:') {
    this.#redis = redis;
    this.#key = prefix + createHash('sha256').update(mainApiUrl).digest('hex').slice(0, 16);
  }

  async declare(by: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    await this.#redis
      .multi()
      .zremrangebyscore(this.#key, '-inf', now)
      .zadd(this.#key, now + ttlMs, by)
      .pexpire(this.#key, Math.ceil(ttlMs))
      .exec();
  }

  async withdraw(by: string): Promise<void> {
    await this.#redis.zrem(this.#key, by);
  }

  async declared(): Promise<boolean> {
    return (await this.#redis.zcount(this.#key, `(${Date.now()}`, '+inf')) > 0;
  }
}

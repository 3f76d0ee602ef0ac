import { decodePrint, encodePrint, type TrajectoryPrint } from '@gatehouse/core/challenges';
import type { Redis } from 'ioredis';

/**
 * The slide drags an app saw recently, so that a drag recorded once and replayed on new challenges passes
 * once (docs/challenges.md, "Replays"). Each print is kept under its band keys; `remember` answers the
 * prints already kept under any of them (the candidates, compared exactly by the caller) and adds the new
 * one, in one step. Per app: one integrator's traffic never refuses another's users.
 */
export const REPLAY_MEMORY = {
  /**
   * How long a drag is remembered: five challenge lifetimes, so a replay must wait that long between uses
   * of one recording, and a live drag is compared with at most this window of an app's traffic.
   */
  ttlMs: 10 * 60_000,
  /** Prints kept per band key (the newest): a band shared by unrelated drags cannot grow without bound. */
  perKey: 8,
} as const;

export interface ReplayMemory {
  /** Adds `print` for `appId`; answers the prints kept under its band keys before it (each once). */
  remember(appId: string, print: TrajectoryPrint, now?: number): Promise<Int16Array[]>;
}

const decodeAll = (texts: readonly string[]): Int16Array[] =>
  [...new Set(texts)].map(decodePrint).filter((v): v is Int16Array => v !== null);

/** One process's memory: right for one instance (with several, configure Redis). Bounded in keys. */
export class MemoryReplayMemory implements ReplayMemory {
  readonly #entries = new Map<string, { prints: string[]; expires: number }>();
  readonly #maxKeys: number;

  constructor(maxKeys = 200_000) {
    this.#maxKeys = maxKeys;
  }

  async remember(appId: string, print: TrajectoryPrint, now = Date.now()): Promise<Int16Array[]> {
    const text = encodePrint(print.vector);
    const seen: string[] = [];
    // A flood of distinct drags forgets everything rather than growing without bound.
    if (this.#entries.size + print.bands.length > this.#maxKeys) this.#entries.clear();
    for (const band of print.bands) {
      const key = `${appId}|${band}`;
      const entry = this.#entries.get(key);
      const live = entry && entry.expires > now ? entry.prints : [];
      seen.push(...live);
      this.#entries.set(key, {
        prints: [text, ...live].slice(0, REPLAY_MEMORY.perKey),
        expires: now + REPLAY_MEMORY.ttlMs,
      });
    }
    return decodeAll(seen);
  }
}

/** Reads every band's list and pushes the new print on it, in one step (concurrent replays see each other). */
const REMEMBER_SCRIPT = `
local out = {}
for _, key in ipairs(KEYS) do
  for _, v in ipairs(redis.call('LRANGE', key, 0, -1)) do out[#out + 1] = v end
  redis.call('LPUSH', key, ARGV[1])
  redis.call('LTRIM', key, 0, tonumber(ARGV[2]) - 1)
  redis.call('PEXPIRE', key, ARGV[3])
end
return out`;

/** Shared by every instance through Redis: one script per slide submission. */
export class RedisReplayMemory implements ReplayMemory {
  readonly #redis: Redis;

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  async remember(appId: string, print: TrajectoryPrint): Promise<Int16Array[]> {
    // One hash tag per app: the keys of one script sit in one slot of a Redis Cluster.
    const keys = print.bands.map((band) => `gatehouse:traj:{${appId}}:${band}`);
    const seen = (await this.#redis.eval(
      REMEMBER_SCRIPT,
      keys.length,
      ...keys,
      encodePrint(print.vector),
      REPLAY_MEMORY.perKey,
      REPLAY_MEMORY.ttlMs,
    )) as string[];
    return decodeAll(seen);
  }
}

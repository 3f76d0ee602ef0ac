import { CLOCK_SKEW_SECONDS } from './tokens/offline.ts';

/**
 * What makes an `offline_` token more than a signature: the outage log (each standby process records, per
 * region, when it served because the main API was down or the operator said so) and the list of revoked
 * standby keys. Both live in the standby's shared store (Redis, STANDBY_STORE_URL), which the main API
 * already reads for single use: it outlives the main API and its database, which is what fails in an
 * outage (docs/decisions.md, "Offline trust"). A checker accepts an `offline_` token only if its `iat`
 * falls inside a recorded window of its key's region, with OUTAGE_GRACE_SECONDS either side.
 */
export interface OfflineTrust {
  /** `by` (one standby process) served for `region` from `startMs`, at least until `untilMs`. */
  recordOutage(region: string, by: string, startMs: number, untilMs: number): Promise<void>;
  /** Whether some recorded window of `region` covers `atMs`, allowing `graceMs` either side. */
  outageCovers(region: string, atMs: number, graceMs?: number): Promise<boolean>;
  /** Recorded windows of a region ending after `sinceMs`, oldest first (for operators and tests). */
  outages(region: string, sinceMs?: number): Promise<{ by: string; startMs: number; untilMs: number }[]>;
  revoke(kid: string): Promise<void>;
  isRevoked(kid: string): Promise<boolean>;
}

/** Hosts' clocks may disagree this much (the same allowance as token lifetimes). */
export const OUTAGE_GRACE_SECONDS = CLOCK_SKEW_SECONDS;
/** How long a finished window is kept: far beyond any token's life, short enough to stay small. */
export const OUTAGE_RETENTION_MS = 24 * 3600_000;

/** The part of a Redis client used here (ioredis's `call`), so core does not depend on one. */
export interface RedisCaller {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
}

type Window = { by: string; startMs: number; untilMs: number };

function covers(windows: Window[], atMs: number, graceMs: number): boolean {
  return windows.some((w) => w.startMs - graceMs <= atMs && atMs <= w.untilMs + graceMs);
}

export class RedisOfflineTrust implements OfflineTrust {
  readonly #redis: RedisCaller;
  readonly #prefix: string;

  constructor(redis: RedisCaller, prefix = 'gatehouse:standby:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  // One sorted set per region: member `<startMs>|<process>`, score = until when it served (ms).
  async recordOutage(region: string, by: string, startMs: number, untilMs: number): Promise<void> {
    const key = `${this.#prefix}outages:${region}`;
    await this.#redis.call('ZADD', key, untilMs, `${startMs}|${by}`);
    await this.#redis.call('ZREMRANGEBYSCORE', key, '-inf', Date.now() - OUTAGE_RETENTION_MS);
    await this.#redis.call('PEXPIRE', key, OUTAGE_RETENTION_MS);
  }

  async outages(region: string, sinceMs = 0): Promise<Window[]> {
    // Flat [member, score, ...] (RESP2) or pairs [[member, score], ...] (RESP3): read either.
    const raw = (
      (await this.#redis.call(
        'ZRANGEBYSCORE',
        `${this.#prefix}outages:${region}`,
        sinceMs,
        '+inf',
        'WITHSCORES',
      )) as unknown[]
    ).flat() as string[];
    const windows: Window[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const member = raw[i]!;
      const bar = member.indexOf('|');
      windows.push({
        by: member.slice(bar + 1),
        startMs: Number(member.slice(0, bar)),
        untilMs: Number(raw[i + 1]),
      });
    }
    return windows.sort((a, b) => a.startMs - b.startMs);
  }

  async outageCovers(region: string, atMs: number, graceMs = OUTAGE_GRACE_SECONDS * 1000): Promise<boolean> {
    return covers(await this.outages(region, atMs - graceMs), atMs, graceMs);
  }

  async revoke(kid: string): Promise<void> {
    await this.#redis.call('SADD', `${this.#prefix}revoked`, kid);
  }

  async isRevoked(kid: string): Promise<boolean> {
    return Number(await this.#redis.call('SISMEMBER', `${this.#prefix}revoked`, kid)) === 1;
  }
}

/** One process's record: `npm start` (the API and both standby roles in one process) and tests. */
export class MemoryOfflineTrust implements OfflineTrust {
  readonly #windows = new Map<string, Map<string, Window>>();
  readonly #revoked = new Set<string>();

  async recordOutage(region: string, by: string, startMs: number, untilMs: number): Promise<void> {
    const windows = this.#windows.get(region) ?? new Map<string, Window>();
    windows.set(`${startMs}|${by}`, { by, startMs, untilMs });
    for (const [k, w] of windows) if (w.untilMs < Date.now() - OUTAGE_RETENTION_MS) windows.delete(k);
    this.#windows.set(region, windows);
  }

  async outages(region: string, sinceMs = 0): Promise<Window[]> {
    return [...(this.#windows.get(region)?.values() ?? [])]
      .filter((w) => w.untilMs >= sinceMs)
      .sort((a, b) => a.startMs - b.startMs);
  }

  async outageCovers(region: string, atMs: number, graceMs = OUTAGE_GRACE_SECONDS * 1000): Promise<boolean> {
    return covers(await this.outages(region), atMs, graceMs);
  }

  async revoke(kid: string): Promise<void> {
    this.#revoked.add(kid);
  }

  async isRevoked(kid: string): Promise<boolean> {
    return this.#revoked.has(kid);
  }
}

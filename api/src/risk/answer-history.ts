import { clientKey } from '@gatehouse/core/ip';
import type { Redis } from 'ioredis';
import { memoByIp } from './ip-memo.ts';
import { MemoryReplayMemory, RedisReplayMemory, type ReplayMemory } from './replays.ts';

/**
 * What one address's recent image answers say about the next challenge from it: consecutive
 * wrong answers escalate (a harder tier, then a short refusal), and keyboard completions raise the score a
 * little. Both counts decay with a half-life, so nothing here lasts: an office behind one NAT is never
 * locked out for more than a few minutes by one person's misses (docs/decisions.md, "Escalation after
 * wrong answers").
 */
export const ANSWER_HISTORY = {
  /** Both counts halve every 10 minutes without new events. */
  halfLifeMs: 10 * 60_000,
  /** Counts never exceed this, which bounds how long a refusal can last (see `refusalSeconds`). */
  cap: 10,
  /** Consecutive failures (rounded) below this add nothing: people miss, and a miss costs them a fresh picture. */
  freeFailures: 2,
  /** Points per failure from `freeFailures` on, up to `maxFailurePoints`. */
  pointsPerFailure: 10,
  /** Enough to move a medium-risk request into the hard tier (proof-of-work plus image), not to refuse it. */
  maxFailurePoints: 40,
  /** At this many (decayed) consecutive failures, inits from the address are refused until the count decays. */
  refuseAt: 7.5,
  /** Points per recent keyboard completion (rounded), up to `maxKeyboardPoints`. */
  pointsPerKeyboard: 10,
  /** A person at the base score (10) plus this stays under the invisible threshold (35). */
  maxKeyboardPoints: 20,
} as const;

/** The two decayed counts of one address, as of now. */
export interface AnswerCounts {
  /** Wrong image answers since the last pass, decayed. */
  failures: number;
  /** Passes answered with the keyboard, decayed. */
  keyboard: number;
}

export type AnswerEvent = 'failed' | 'passed' | 'passed_keyboard';

/** Where the counts live: Redis when configured (every instance shares them), else this process's memory. */
export interface AnswerHistory {
  read(key: string, now?: number): Promise<AnswerCounts>;
  /** The same without a promise, where the counts live in this process (as VelocityCounter.hitNow). */
  readNow?(key: string, now?: number): AnswerCounts;
  record(key: string, event: AnswerEvent, now?: number): Promise<void>;
  /** The slide drags each app saw recently, in the same store (replays.ts). */
  readonly replays: ReplayMemory;
  /**
   * The kind of picture a client last answered wrongly (null: it passed since), so that its next picture
   * is of the same kind: a person who missed tries the same task again. Kept for RETRY_KIND_MS.
   */
  rememberKind?(key: string, kind: string | null, now?: number): Promise<void>;
  retryKind?(key: string, now?: number): Promise<string | undefined>;
}

/** How long a wrong answer's kind is kept for the client's next picture. */
export const RETRY_KIND_MS = 10 * 60_000;

/**
 * The history key of a client for one app (as the velocity counts: one integrator's users never move another's):
 * an IPv6 client is its /64 (`clientKey`), or a script would take a new address for every try.
 */
export const historyKey = (appId: string, ip: string) => `${appId}:${clientKeyOf(ip)}`;
const clientKeyOf = memoByIp(clientKey);

const decay = (value: number, since: number, now: number) =>
  value * 2 ** (-Math.max(0, now - since) / ANSWER_HISTORY.halfLifeMs);

/** Applies one event to decayed counts: a failure adds one, any pass ends the run of failures. */
function apply(counts: AnswerCounts, event: AnswerEvent): AnswerCounts {
  const { cap } = ANSWER_HISTORY;
  if (event === 'failed') return { ...counts, failures: Math.min(cap, counts.failures + 1) };
  return {
    failures: 0,
    keyboard: event === 'passed_keyboard' ? Math.min(cap, counts.keyboard + 1) : counts.keyboard,
  };
}

/** Points and reasons for the next init, and whether it is refused (with how long until it would not be). */
export function answerFindings(counts: AnswerCounts): {
  findings: Array<{ points: number; reason: string }>;
  refuseForSeconds: number;
} {
  const h = ANSWER_HISTORY;
  const findings: Array<{ points: number; reason: string }> = [];
  const failures = Math.round(counts.failures);
  if (failures >= h.freeFailures) {
    const points = Math.min(h.maxFailurePoints, h.pointsPerFailure * (failures - h.freeFailures + 1));
    findings.push({ points, reason: 'answers.failed' });
  }
  const keyboard = Math.round(counts.keyboard);
  if (keyboard >= 1) {
    findings.push({
      points: Math.min(h.maxKeyboardPoints, h.pointsPerKeyboard * keyboard),
      reason: 'answers.keyboard',
    });
  }
  // The time for the count to decay back under the threshold: at most halfLife * log2(cap / refuseAt) (4.2 min).
  const refuseForSeconds =
    counts.failures >= h.refuseAt
      ? Math.max(1, Math.ceil((h.halfLifeMs / 1000) * Math.log2(counts.failures / h.refuseAt)))
      : 0;
  return { findings, refuseForSeconds };
}

/** One process's counts: right for one instance (with several, use Redis). Bounded like the velocity counts. */
export class MemoryAnswerHistory implements AnswerHistory {
  readonly #entries = new Map<string, AnswerCounts & { at: number }>();
  readonly #maxKeys: number;
  readonly #kinds = new Map<string, { kind: string; until: number }>();
  readonly replays: ReplayMemory = new MemoryReplayMemory();

  async rememberKind(key: string, kind: string | null, now = Date.now()): Promise<void> {
    if (kind === null) this.#kinds.delete(key);
    else {
      if (this.#kinds.size >= this.#maxKeys && !this.#kinds.has(key)) this.#kinds.clear();
      this.#kinds.set(key, { kind, until: now + RETRY_KIND_MS });
    }
  }

  async retryKind(key: string, now = Date.now()): Promise<string | undefined> {
    const entry = this.#kinds.get(key);
    return entry && entry.until > now ? entry.kind : undefined;
  }

  constructor(maxKeys = 100_000) {
    this.#maxKeys = maxKeys;
  }

  async read(key: string, now = Date.now()): Promise<AnswerCounts> {
    return this.readNow(key, now);
  }

  readNow(key: string, now = Date.now()): AnswerCounts {
    const entry = this.#entries.get(key);
    if (!entry) return { failures: 0, keyboard: 0 };
    return { failures: decay(entry.failures, entry.at, now), keyboard: decay(entry.keyboard, entry.at, now) };
  }

  async record(key: string, event: AnswerEvent, now = Date.now()): Promise<void> {
    // An attack spraying addresses forgets everything rather than growing without bound.
    if (this.#entries.size >= this.#maxKeys && !this.#entries.has(key)) this.#entries.clear();
    this.#entries.set(key, { ...apply(await this.read(key, now), event), at: now });
  }
}

/** Decays, applies the event and stores it in one step, so concurrent answers from one address never lose one. */
const RECORD_SCRIPT = `
local h = redis.call('HMGET', KEYS[1], 'f', 'k', 't')
local now = tonumber(ARGV[1])
local d = 2 ^ (-math.max(0, now - (tonumber(h[3]) or now)) / tonumber(ARGV[2]))
local f = (tonumber(h[1]) or 0) * d
local k = (tonumber(h[2]) or 0) * d
local cap = tonumber(ARGV[4])
if ARGV[3] == 'failed' then f = math.min(cap, f + 1) else f = 0 end
if ARGV[3] == 'passed_keyboard' then k = math.min(cap, k + 1) end
redis.call('HSET', KEYS[1], 'f', tostring(f), 'k', tostring(k), 't', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

/** After six half-lives (an hour) a count is under 2 % of what it was: the key expires then. */
const KEY_TTL_MS = 6 * ANSWER_HISTORY.halfLifeMs;

/** Counts shared by every instance through Redis: one round trip to read, one script to record. */
export class RedisAnswerHistory implements AnswerHistory {
  readonly #redis: Redis;
  readonly replays: ReplayMemory;

  constructor(redis: Redis) {
    this.#redis = redis;
    this.replays = new RedisReplayMemory(redis);
  }

  async rememberKind(key: string, kind: string | null): Promise<void> {
    if (kind === null) await this.#redis.del(`gatehouse:ans:${key}:kind`);
    else await this.#redis.set(`gatehouse:ans:${key}:kind`, kind, 'PX', RETRY_KIND_MS);
  }

  async retryKind(key: string): Promise<string | undefined> {
    return (await this.#redis.get(`gatehouse:ans:${key}:kind`)) ?? undefined;
  }

  async read(key: string, now = Date.now()): Promise<AnswerCounts> {
    const [f, k, t] = await this.#redis.hmget(`gatehouse:ans:${key}`, 'f', 'k', 't');
    const at = Number(t ?? now);
    return { failures: decay(Number(f ?? 0), at, now), keyboard: decay(Number(k ?? 0), at, now) };
  }

  async record(key: string, event: AnswerEvent, now = Date.now()): Promise<void> {
    await this.#redis.eval(
      RECORD_SCRIPT,
      1,
      `gatehouse:ans:${key}`,
      now,
      ANSWER_HISTORY.halfLifeMs,
      event,
      ANSWER_HISTORY.cap,
      KEY_TTL_MS,
    );
  }
}

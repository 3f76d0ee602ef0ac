import { type Database, regionalColumn, rowsOf } from '@gatehouse/core/db';
import type { App } from '@gatehouse/core/db/schema';
import { sql } from 'drizzle-orm';
import { effectivePlan } from '../apps/plans.ts';

/** The calendar month (UTC) a challenge counts toward, e.g. "2026-11". */
export function quotaPeriod(now = new Date()): string {
  return periodAt(now.getTime());
}

/** The last month `periodAt` named and its bounds (ms, UTC): one toISOString a month, not one per init. */
let month = { start: Number.NaN, end: Number.NaN, period: '' };

/** quotaPeriod of a time in ms, from the month it last named while the time falls in it. */
export function periodAt(ms: number): string {
  if (ms >= month.start && ms < month.end) return month.period;
  const date = new Date(ms);
  const period = date.toISOString().slice(0, 7);
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  month = { start, end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1), period };
  return period;
}

export type QuotaDecision = { allowed: true; used: number } | { allowed: false; used: number };

/**
 * Counts one challenge toward the app's monthly quota. Without overage the increment is conditional, so
 * concurrent initializations never push the count past the quota, and an exhausted app's requests count
 * nothing (they get a `dg_` token, which is never billed). A lapsed subscription counts against the free
 * plan's quota (spec rule 1), never degraded mode beyond it.
 *
 * The counts of one app arriving in the same event-loop turn go in one statement (quota-batch below): every
 * init of an app increments the same row, and one statement per init would make them queue on its lock.
 */
export async function countChallenge(db: Database, app: App, now = new Date()): Promise<QuotaDecision> {
  const plan = effectivePlan(app, now);
  const period = quotaPeriod(now);
  if (!plan.overageAllowed && plan.monthlyQuota <= 0) return { allowed: false, used: 0 };
  return batcher(db).count({ app: app.id, period, quota: plan.monthlyQuota, overage: plan.overageAllowed });
}

/**
 * The count without waiting for it, where it cannot refuse: with overage every unit is allowed, so the init is
 * answered at once and its unit goes into the app's next counting statement (write-behind: waiting for the
 * statement's round trip would leave the event loop idle between batches). Undefined without overage (or a
 * lapsed subscription, which falls back to the free plan): then the count must be awaited (`countChallenge`),
 * as it may refuse. A unit whose statement fails is kept and sent again (QUOTA_RETRY_MS later) until it lands;
 * `flushQuotaCounts` sends what is pending before the database is closed. `used` is not known yet: 0.
 */
export function countChallengeNow(db: Database, app: App, now = new Date()): QuotaDecision | undefined {
  const plan = effectivePlan(app, now);
  if (!plan.overageAllowed) return undefined;
  batcher(db).countBehind({ app: app.id, period: quotaPeriod(now), quota: plan.monthlyQuota, overage: true });
  return COUNTED_BEHIND;
}

const COUNTED_BEHIND: QuotaDecision = Object.freeze({ allowed: true, used: 0 });

/**
 * How long a unit counted behind (nobody waits for it) may wait for others to share its statement. Per
 * event-loop turn alone, a server answering inits one at a time (spread out, as image inits arrive while
 * drawings come back) would send one upsert per init, each costing PostgreSQL and API CPU; the window lets
 * them share one (docs/decisions.md, "Challenge flow"). A count waiting is the only cost: `flushQuotaCounts`
 * sends it at shutdown, and a quota read (the console) may lag this long. The timer keeps the process alive
 * meanwhile, as a next-turn callback would.
 */
export const QUOTA_BEHIND_WINDOW_MS = 10;

/** After a failed statement, the units counted behind are sent again this much later. */
export const QUOTA_RETRY_MS = 1000;

/** Sends every count not yet written (write-behind) and waits for the statements in flight: before closing the database. */
export async function flushQuotaCounts(db: Database): Promise<void> {
  await batchers.get(db)?.drain(true);
}

/** One statement for one or more units: all of them counted, or (without overage) none, if they would not fit. */
async function countUnits(db: Database, unit: Unit, units: number): Promise<number | undefined> {
  const guard = unit.overage ? sql`` : sql` where app_usage.challenges + ${units} <= ${unit.quota}`;
  const region = regionalColumn(db, 'app_usage');
  const rows = await db.execute(sql`
    insert into app_usage (app_id, period, challenges${region.column}) values (${unit.app}, ${unit.period}, ${units}${region.value})
    on conflict (app_id, period) do update set challenges = app_usage.challenges + ${units}${guard}
    returning challenges`);
  const row = rowsOf<{ challenges: number | string }>(rows)[0];
  return row ? Number(row.challenges) : undefined;
}

type Unit = { app: string; period: string; quota: number; overage: boolean };
type Waiting = { resolve: (decision: QuotaDecision) => void; reject: (error: unknown) => void };

/**
 * At most this many counting statements in flight per app (and period and plan). One alone funnelled every
 * init of an app through one PostgreSQL backend's round trip, which a busy machine stretches to
 * milliseconds; two overlap one statement's round trip with the next batch, and more would only queue on
 * the row's lock.
 */
export const QUOTA_IN_FLIGHT = 2;

/**
 * Gathers the counts per app, period and plan as a group commit: the counts of one event-loop turn go in one
 * statement, at most QUOTA_IN_FLIGHT statements per key are in flight, and the counts that arrive beyond that
 * wait for one to answer and go together in the next (an idle server sends a count in the next turn; a busy one
 * sends larger batches instead of more statements). A batch of n is one statement adding n; without overage, a
 * batch that would not fit entirely (the last units of a month, or n above the quota for a new row) falls back
 * to one conditional statement per unit, so exactly as many are allowed as fit.
 */
type Entry = {
  unit: Unit;
  waiting: Waiting[];
  /** Units counted without a caller waiting (countChallengeNow): allowed already, to be written. */
  behind: number;
  inFlight: number;
  scheduled: boolean;
  /** A retry of failed write-behind units is due (a timer, not the next turn: the database may be gone). */
  retry: ReturnType<typeof setTimeout> | undefined;
};

class QuotaBatcher {
  readonly #db: Database;
  readonly #keys = new Map<string, Entry>();
  #closing = false;
  /** Counting statements in flight, for `drain`. */
  readonly #settling = new Set<Promise<void>>();
  /** Counting statements sent and the counts they carried (the fallback's statements included). */
  readonly stats = { statements: 0, counts: 0, failedBehind: 0 };

  constructor(db: Database) {
    this.#db = db;
  }

  count(unit: Unit): Promise<QuotaDecision> {
    return new Promise((resolve, reject) => {
      const [key, entry] = this.#entry(unit);
      entry.waiting.push({ resolve, reject });
      this.#schedule(key, entry);
    });
  }

  /** One unit that cannot be refused (overage), written with the next statement of its key; nobody waits. */
  countBehind(unit: Unit): void {
    const [key, entry] = this.#entry(unit);
    entry.behind++;
    this.#schedule(key, entry);
  }

  /**
   * Sends what is pending now, and waits until nothing is pending or in flight (or a statement failed);
   * `closing`: no retry is armed after it (the database is about to close; what failed is lost, and said).
   */
  async drain(closing = false): Promise<void> {
    if (closing) this.#closing = true;
    for (let round = 0; round < 100; round++) {
      for (const [key, entry] of this.#keys) {
        if (entry.retry) {
          clearTimeout(entry.retry);
          entry.retry = undefined;
        }
        this.#flush(key);
      }
      if (this.#settling.size === 0) return;
      const failed = this.stats.failedBehind;
      await Promise.allSettled([...this.#settling]);
      // A statement failed: what it carried is kept for a retry, not sent again in a loop here.
      if (this.stats.failedBehind !== failed) return;
    }
  }

  #entry(unit: Unit): [string, Entry] {
    const key = `${unit.app}\n${unit.period}\n${unit.quota}\n${unit.overage}`;
    let entry = this.#keys.get(key);
    if (!entry) {
      entry = { unit, waiting: [], behind: 0, inFlight: 0, scheduled: false, retry: undefined };
      this.#keys.set(key, entry);
    }
    return [key, entry];
  }

  #schedule(key: string, entry: Entry): void {
    if (entry.inFlight >= QUOTA_IN_FLIGHT || entry.scheduled || entry.retry) return;
    if (entry.waiting.length === 0 && entry.behind === 0) return;
    entry.scheduled = true;
    const run = () => {
      entry.scheduled = false;
      this.#flush(key);
      this.#forgetIfIdle(key, entry);
    };
    // Callers waiting (no overage) are answered by the next turn's statement; units nobody waits for (with
    // overage, so never under the same key as a waiter) gather for a window first.
    if (entry.waiting.length > 0) setImmediate(run);
    else setTimeout(run, QUOTA_BEHIND_WINDOW_MS);
  }

  /** Nothing in flight or waiting: the key is forgotten (a month's or a plan's key never lingers). */
  #forgetIfIdle(key: string, entry: Entry): void {
    if (
      entry.waiting.length === 0 &&
      entry.behind === 0 &&
      entry.inFlight === 0 &&
      !entry.scheduled &&
      !entry.retry &&
      this.#keys.get(key) === entry
    ) {
      this.#keys.delete(key);
    }
  }

  #flush(key: string): void {
    const entry = this.#keys.get(key);
    if (!entry || entry.inFlight >= QUOTA_IN_FLIGHT) return;
    if (entry.waiting.length === 0 && entry.behind === 0) return;
    const { unit, waiting, behind } = entry;
    entry.waiting = [];
    entry.behind = 0;
    entry.inFlight++;
    const settling = this.#settle(unit, waiting, behind)
      .catch((error: unknown) => {
        for (const w of waiting) w.reject(error);
        if (behind > 0) {
          // Allowed already: kept and sent again later, so a database outage loses no billed unit.
          this.stats.failedBehind += behind;
          entry.behind += behind;
          if (this.#closing) return;
          entry.retry ??= setTimeout(() => {
            entry.retry = undefined;
            this.#schedule(key, entry);
          }, QUOTA_RETRY_MS);
          entry.retry.unref?.();
        }
      })
      .finally(() => {
        entry.inFlight--;
        this.#settling.delete(settling);
        this.#schedule(key, entry);
        this.#forgetIfIdle(key, entry);
      });
    this.#settling.add(settling);
  }

  async #settle(unit: Unit, waiting: Waiting[], behind: number): Promise<void> {
    const n = waiting.length + behind;
    const count = (units: number) => {
      this.stats.statements++;
      this.stats.counts += units;
      return countUnits(this.#db, unit, units);
    };
    const total = n === 1 || unit.overage || n <= unit.quota ? await count(n) : undefined;
    if (total !== undefined) {
      // The batch's units are the last n counted: each is told its own position, as one statement each would.
      for (const [i, w] of waiting.entries()) w.resolve({ allowed: true, used: total - n + i + 1 });
      return;
    }
    if (waiting.length === 1) {
      waiting[0]!.resolve({ allowed: false, used: unit.quota });
      return;
    }
    // Not all fit: one conditional unit at a time, as many as the quota still holds.
    await Promise.all(
      waiting.map(async (w) => {
        const used = await count(1);
        w.resolve(used === undefined ? { allowed: false, used: unit.quota } : { allowed: true, used });
      }),
    );
  }
}

const batchers = new WeakMap<Database, QuotaBatcher>();

function batcher(db: Database): QuotaBatcher {
  let found = batchers.get(db);
  if (!found) {
    found = new QuotaBatcher(db);
    batchers.set(db, found);
  }
  return found;
}

/** Gives back one unit counted by `countChallenge` for an initialization refused after it was counted. */
export async function refundChallenge(db: Database, app: Pick<App, 'id'>, now = new Date()): Promise<void> {
  await db.execute(sql`
    update app_usage set challenges = challenges - 1
    where app_id = ${app.id} and period = ${quotaPeriod(now)} and challenges > 0`);
}

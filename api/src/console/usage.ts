import { type Database, isDatabaseUnavailable, regional } from '@gatehouse/core/db';
import { usageHourly } from '@gatehouse/core/db/schema';
import { and, gte, inArray, sql } from 'drizzle-orm';
import type { Logger } from 'pino';

/** How often counts held in memory are added to the database. */
export const FLUSH_INTERVAL_MS = 5_000;
/** Rows per INSERT: one statement per flush for any realistic number of apps. */
const BATCH = 500;

/** One hour of one app: metric name -> count. */
export interface UsageHour {
  hour: string;
  counts: Record<string, number>;
}

/**
 * Usage per app and hour for the console's charts. The request path only increments a counter in
 * memory; every few seconds the counts are added to `usage_hourly` in one batched upsert (adding, so
 * several API instances share the table), and reads are a range over that small table, never a scan of
 * token tables. A failed flush keeps its counts for the next one.
 */
export class UsageRollup {
  readonly #db: Database;
  readonly #logger: Logger;
  /** Counts not yet written: hour (ISO) -> app key -> metric -> count. */
  #pending: Pending = new Map();
  /** The current hour's map of apps in `#pending`, or undefined until its first event. */
  #current: Map<string, Map<string, number>> | undefined;
  /** The current hour's start (ms) and its ISO form: one Date and toISOString per hour, not per event. */
  #hourStart = Number.NaN;
  #hourIso = '';
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> | undefined;

  constructor(db: Database, logger: Logger, intervalMs = FLUSH_INTERVAL_MS) {
    this.#db = db;
    this.#logger = logger;
    this.#timer = setInterval(() => void this.flush(), intervalMs);
    this.#timer.unref();
  }

  /** Counts one event (`challenge.image`, `validate.valid`...) for the app, in the current hour. */
  record(appKey: string, metric: string, count = 1): void {
    const now = Date.now();
    if (!(now >= this.#hourStart && now < this.#hourStart + 3_600_000)) {
      const hour = hourOf(new Date(now));
      this.#hourStart = hour.getTime();
      this.#hourIso = hour.toISOString();
      this.#current = undefined;
    }
    // Nested maps rather than a key string joined per event (a validation records two events).
    let apps = this.#current;
    if (!apps) {
      apps = this.#pending.get(this.#hourIso);
      if (!apps) {
        apps = new Map();
        this.#pending.set(this.#hourIso, apps);
      }
      this.#current = apps;
    }
    add(apps, appKey, metric, count);
  }

  /** Adds the counts held in memory to the table; concurrent calls share one flush. */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    this.#current = undefined;
    const rows: { appKey: string; hour: Date; metric: string; count: number }[] = [];
    for (const [hour, apps] of batch) {
      for (const [appKey, metrics] of apps) {
        for (const [metric, count] of metrics) rows.push({ appKey, hour: new Date(hour), metric, count });
      }
    }
    try {
      for (let i = 0; i < rows.length; i += BATCH) {
        await this.#db
          .insert(regional(this.#db, usageHourly))
          .values(rows.slice(i, i + BATCH))
          .onConflictDoUpdate({
            target: [usageHourly.appKey, usageHourly.hour, usageHourly.metric],
            set: { count: sql`${usageHourly.count} + excluded.count` },
          });
      }
    } catch (err) {
      // Kept for the next flush: the console's numbers lag, but nothing is lost while the database is back soon.
      for (const { appKey, hour, metric, count } of rows) {
        const iso = hour.toISOString();
        let apps = this.#pending.get(iso);
        if (!apps) {
          apps = new Map();
          this.#pending.set(iso, apps);
          if (iso === this.#hourIso) this.#current = apps;
        }
        add(apps, appKey, metric, count);
      }
      // A lost database is logged once, by the requests and probes that meet it (database-health.ts).
      if (!isDatabaseUnavailable(err)) {
        this.#logger.warn({ err }, 'usage rollup flush failed; retrying with the next one');
      }
    }
  }

  /** The app's counts (under any of its keys) for each hour of the last `hours` hours (hours without events included, empty). */
  /** Every app key's counts summed over the last `hours` hours (the current one included): key -> metric -> count. */
  async totals(hours: number): Promise<Map<string, Record<string, number>>> {
    const first = hourOf(new Date(Date.now() - (hours - 1) * 3_600_000));
    const rows = await this.#db
      .select({
        appKey: usageHourly.appKey,
        metric: usageHourly.metric,
        count: sql<number>`sum(${usageHourly.count})`.mapWith(Number),
      })
      .from(usageHourly)
      .where(gte(usageHourly.hour, first))
      .groupBy(usageHourly.appKey, usageHourly.metric);
    const byApp = new Map<string, Record<string, number>>();
    for (const row of rows) {
      let counts = byApp.get(row.appKey);
      if (!counts) {
        counts = {};
        byApp.set(row.appKey, counts);
      }
      counts[row.metric] = row.count;
    }
    return byApp;
  }

  async read(appKeys: string[], hours: number): Promise<UsageHour[]> {
    const first = hourOf(new Date(Date.now() - (hours - 1) * 3_600_000));
    const rows = await this.#db
      .select()
      .from(usageHourly)
      .where(and(inArray(usageHourly.appKey, appKeys), gte(usageHourly.hour, first)));
    const byHour = new Map<number, Record<string, number>>();
    for (let i = 0; i < hours; i++) byHour.set(first.getTime() + i * 3_600_000, {});
    for (const row of rows) {
      const counts = byHour.get(row.hour.getTime());
      if (counts) counts[row.metric] = (counts[row.metric] ?? 0) + row.count;
    }
    return [...byHour].map(([hour, counts]) => ({ hour: new Date(hour).toISOString(), counts }));
  }

  /** Stops the timer after a last flush. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}

type Pending = Map<string, Map<string, Map<string, number>>>;

function add(apps: Map<string, Map<string, number>>, appKey: string, metric: string, count: number): void {
  let metrics = apps.get(appKey);
  if (!metrics) {
    metrics = new Map();
    apps.set(appKey, metrics);
  }
  metrics.set(metric, (metrics.get(metric) ?? 0) + count);
}

function hourOf(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 3_600_000) * 3_600_000);
}

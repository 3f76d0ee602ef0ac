import { type Database, regionalColumn } from '@gatehouse/core/db';
import type { App } from '@gatehouse/core/db/schema';
import { sql } from 'drizzle-orm';
import { effectivePlan } from '../apps/plans.ts';

/** The calendar month (UTC) a challenge counts toward, e.g. "2026-11". */
export function quotaPeriod(now = new Date()): string {
  return now.toISOString().slice(0, 7);
}

export type QuotaDecision = { allowed: true; used: number } | { allowed: false; used: number };

/**
 * Counts one challenge toward the app's monthly quota in one statement. Without overage the increment is
 * conditional, so concurrent initializations never push the count past the quota, and an exhausted app's
 * requests count nothing (they get a `dg_` token, which is never billed). A lapsed subscription counts
 * against the free plan's quota (spec rule 1), never degraded mode beyond it.
 */
export async function countChallenge(db: Database, app: App, now = new Date()): Promise<QuotaDecision> {
  const plan = effectivePlan(app, now);
  const period = quotaPeriod(now);
  if (!plan.overageAllowed && plan.monthlyQuota <= 0) return { allowed: false, used: 0 };
  const guard = plan.overageAllowed ? sql`` : sql` where app_usage.challenges < ${plan.monthlyQuota}`;
  const region = regionalColumn(db, 'app_usage');
  const rows = await db.execute(sql`
    insert into app_usage (app_id, period, challenges${region.column}) values (${app.id}, ${period}, 1${region.value})
    on conflict (app_id, period) do update set challenges = app_usage.challenges + 1${guard}
    returning challenges`);
  const row = rowsOf<{ challenges: number | string }>(rows)[0];
  if (row) return { allowed: true, used: Number(row.challenges) };
  return { allowed: false, used: plan.monthlyQuota };
}

/** Gives back one unit counted by `countChallenge` for an initialization refused after it was counted. */
export async function refundChallenge(db: Database, app: Pick<App, 'id'>, now = new Date()): Promise<void> {
  await db.execute(sql`
    update app_usage set challenges = challenges - 1
    where app_id = ${app.id} and period = ${quotaPeriod(now)} and challenges > 0`);
}

/** postgres.js returns an array of rows, PGlite an object with `rows`. */
function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}

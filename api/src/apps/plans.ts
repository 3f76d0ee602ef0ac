import type { App } from '@gatehouse/core/db/schema';

/**
 * Plans and what they allow. `monthly_quota` and `overage_allowed` on an app override its plan's values
 * (custom quotas); an expired subscription falls back to the free plan and never to degraded mode.
 */
export interface Plan {
  monthlyQuota: number;
  overageAllowed: boolean;
  /** Server-token issuance, token bucket per app: steady rate and burst. */
  issuance: { perSecond: number; burst: number };
}

export const PLANS = {
  free: { monthlyQuota: 10_000, overageAllowed: false, issuance: { perSecond: 10, burst: 20 } },
  pro: { monthlyQuota: 1_000_000, overageAllowed: true, issuance: { perSecond: 100, burst: 200 } },
  enterprise: { monthlyQuota: 10_000_000, overageAllowed: true, issuance: { perSecond: 1000, burst: 2000 } },
} as const satisfies Record<string, Plan>;

export type PlanName = keyof typeof PLANS;
export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export interface EffectivePlan extends Plan {
  name: PlanName;
  /** True when a paid subscription has lapsed and the free plan applies instead. */
  lapsed: boolean;
}

/** What the app may do right now: its plan and overrides, or the free plan once its subscription expired. */
export function effectivePlan(
  app: Pick<App, 'plan' | 'monthlyQuota' | 'overageAllowed' | 'subscriptionExpiresAt'>,
  now = new Date(),
): EffectivePlan {
  const named = (Object.hasOwn(PLANS, app.plan) ? app.plan : 'free') as PlanName;
  const end = app.subscriptionExpiresAt;
  // An end date the driver could not read (Invalid Date) counts as lapsed: fail closed, to the free plan.
  const lapsed = named !== 'free' && end !== null && !(end.getTime() > now.getTime());
  if (lapsed) return { name: 'free', lapsed: true, ...PLANS.free };
  const base = PLANS[named];
  return {
    name: named,
    lapsed: false,
    monthlyQuota: app.monthlyQuota ?? base.monthlyQuota,
    overageAllowed: app.overageAllowed ?? base.overageAllowed,
    issuance: base.issuance,
  };
}

import { describe, expect, it } from 'vitest';
import { effectivePlan, PLANS } from './plans.ts';

const now = new Date('2030-06-01T12:00:00Z');
const app = (overrides: Partial<Parameters<typeof effectivePlan>[0]> = {}) => ({
  plan: 'free',
  monthlyQuota: null,
  overageAllowed: null,
  subscriptionExpiresAt: null,
  ...overrides,
});

describe('effectivePlan', () => {
  it('gives each plan its own quota, overage rule and issuance limits', () => {
    for (const name of ['free', 'pro', 'enterprise'] as const) {
      expect(effectivePlan(app({ plan: name }), now)).toEqual({ name, lapsed: false, ...PLANS[name] });
    }
    expect(PLANS.free.overageAllowed).toBe(false);
    expect(PLANS.pro.monthlyQuota).toBeGreaterThan(PLANS.free.monthlyQuota);
  });

  it("lets an app's quota and overage override its plan's, keeping the plan's issuance limits", () => {
    const plan = effectivePlan(app({ plan: 'pro', monthlyQuota: 5_000, overageAllowed: false }), now);
    expect(plan).toEqual({
      name: 'pro',
      lapsed: false,
      monthlyQuota: 5_000,
      overageAllowed: false,
      issuance: PLANS.pro.issuance,
    });
    const free = effectivePlan(app({ monthlyQuota: 50_000, overageAllowed: true }), now);
    expect(free).toMatchObject({ name: 'free', monthlyQuota: 50_000, overageAllowed: true });
  });

  it('honours a quota override of zero (an app allowed nothing), not only truthy ones', () => {
    expect(effectivePlan(app({ plan: 'pro', monthlyQuota: 0 }), now).monthlyQuota).toBe(0);
  });

  it('falls back to the free plan, overrides dropped, once a paid subscription has lapsed', () => {
    const expired = app({
      plan: 'enterprise',
      monthlyQuota: 99_000_000,
      overageAllowed: true,
      subscriptionExpiresAt: new Date('2030-05-31T12:00:00Z'),
    });
    expect(effectivePlan(expired, now)).toEqual({ name: 'free', lapsed: true, ...PLANS.free });
  });

  it('counts a subscription ending exactly now as lapsed, and one ending later as running', () => {
    expect(effectivePlan(app({ plan: 'pro', subscriptionExpiresAt: now }), now).lapsed).toBe(true);
    const later = new Date(now.getTime() + 1000);
    expect(effectivePlan(app({ plan: 'pro', subscriptionExpiresAt: later }), now)).toMatchObject({
      name: 'pro',
      lapsed: false,
      monthlyQuota: PLANS.pro.monthlyQuota,
    });
  });

  it('counts an end date that could not be read back (Invalid Date) as lapsed, never as running', () => {
    const unreadable = app({ plan: 'enterprise', subscriptionExpiresAt: new Date(Number.NaN) });
    expect(effectivePlan(unreadable, now)).toEqual({ name: 'free', lapsed: true, ...PLANS.free });
  });

  it('never reports a free app as lapsed', () => {
    const plan = effectivePlan(app({ subscriptionExpiresAt: new Date('2000-01-01T00:00:00Z') }), now);
    expect(plan).toMatchObject({ name: 'free', lapsed: false, monthlyQuota: PLANS.free.monthlyQuota });
  });

  it('treats an unknown plan name as free, including names inherited from Object.prototype', () => {
    for (const plan of ['legacy', 'constructor', 'toString', '__proto__']) {
      expect(effectivePlan(app({ plan }), now)).toEqual({ name: 'free', lapsed: false, ...PLANS.free });
    }
  });
});

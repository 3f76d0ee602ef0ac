import { z } from 'zod';
import { DEFAULT_PRESSURE, pressurePolicy } from './pressure.ts';
import { reputationLists } from './reputation.ts';

/**
 * Per-app risk policy (the app's `risk_policy` JSON), every field optional with the defaults below.
 * Score < invisible_below: invisible proof-of-work. < image_below: one image challenge. Otherwise the
 * high tier: `hard` (proof-of-work at high difficulty plus an image) or `reject`.
 */
/** What a policy that names no image kinds draws from (docs/decisions.md: why not the slide). */
export const DEFAULT_IMAGE_KINDS = ['click', 'select'] as const;

/**
 * The policy's schema. Written by the admin API and the CLI, it refuses unknown keys at every level: a
 * misspelt `invisble_below` or `rate_limit.ip_per_minut` would otherwise be stored and silently ignored.
 * Read back from the database, it drops them instead, so a row stored before that rule still applies every
 * key it spells right.
 */
function policySchema(unknownKeys: 'refuse' | 'drop') {
  const object = unknownKeys === 'refuse' ? z.strictObject : z.object;
  return object({
    invisible_below: z.number().int().min(0).max(101).default(35),
    image_below: z.number().int().min(0).max(101).default(70),
    high: z.enum(['hard', 'reject']).default('hard'),
    // The slide is opt-in: a short script that finds its two holes passes it most of the time
    // (docs/adversarial.md, the hole finder), so a policy left at its defaults serves click and select only.
    image_kinds: z
      .array(z.enum(['slide', 'click', 'select']))
      .min(1)
      .default([...DEFAULT_IMAGE_KINDS]),
    velocity: object({
      ip: z.tuple([z.number().positive(), z.number().positive()]).default([20, 60]),
      prefix: z.tuple([z.number().positive(), z.number().positive()]).default([100, 400]),
      app: z.number().positive().default(20_000),
    }).default({ ip: [20, 60], prefix: [100, 400], app: 20_000 }),
    rate_limit: object({
      ip_per_minute: z.number().positive().default(120),
      high_risk_ip_per_minute: z.number().positive().default(20),
    }).default({ ip_per_minute: 120, high_risk_ip_per_minute: 20 }),
    reputation: reputationLists.partial().optional(),
    /** Per-source prices of sustained automation (docs/security.md, "Pressure pricing"). */
    pressure: pressurePolicy.default(DEFAULT_PRESSURE),
  }).refine((p) => p.invisible_below <= p.image_below, {
    message: 'invisible_below must not exceed image_below',
    path: ['invisible_below'],
  });
}

/** A policy as the admin API and the CLI take it: unknown keys refused at every level. */
export const riskPolicy = policySchema('refuse');
/** A policy as stored: unknown keys dropped. */
const storedRiskPolicy = policySchema('drop');

export type RiskPolicy = z.infer<typeof riskPolicy>;
export type Tier = 'invisible' | 'image' | 'hard' | 'reject';

const resolved = new WeakMap<object, RiskPolicy>();
let defaults: RiskPolicy | undefined;

/**
 * The app's policy with defaults filled in; a stored policy that no longer parses falls back to defaults.
 * Parsed once per stored object: the app repository caches app rows, so every init of an app hands in the
 * same object, and parsing is too dear to repeat on every init. The result is shared: callers must not
 * change it.
 */
export function resolvePolicy(stored: unknown): RiskPolicy {
  const cacheable = typeof stored === 'object' && stored !== null;
  const hit = cacheable ? resolved.get(stored) : stored == null ? defaults : undefined;
  if (hit) return hit;
  const parsed = storedRiskPolicy.safeParse(stored ?? {});
  const policy = parsed.success ? parsed.data : storedRiskPolicy.parse({});
  if (cacheable) resolved.set(stored, policy);
  else if (stored == null) defaults = policy;
  return policy;
}

/** Spec rule 2: the tier is chosen server-side from the score alone. */
export function tierFor(score: number, policy: RiskPolicy): Tier {
  if (score < policy.invisible_below) return 'invisible';
  if (score < policy.image_below) return 'image';
  return policy.high;
}

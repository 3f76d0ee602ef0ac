import { z } from 'zod';

/**
 * A source's share of an app's monthly units (docs/security.md, "Pressure pricing"): the challenges one
 * client (an IPv4 address, an IPv6 /64) or one network (/24, /48) may spend of the plan's units over a
 * sliding 30 days. Past it the source's challenges are served at the image stage of the price without
 * spending the app's units, so a few paced sources can neither exhaust a quota (and force degraded mode,
 * a pass without a challenge, on every visitor) nor run up an app's overage.
 */
export const SHARE_WINDOW_MS = 30 * 24 * 3_600_000;

export const quotaSharePolicy = z
  .strictObject({
    /** Fraction of the plan's monthly units one client may spend. */
    ip: z.number().min(0).max(1).default(0.02),
    /** Fraction one network may spend. */
    prefix: z.number().min(0).max(1).default(0.1),
    /** Units any source may spend whatever the fractions (small plans). */
    floor: z.number().int().min(0).default(100),
  })
  .default({ ip: 0.02, prefix: 0.1, floor: 100 });

export type QuotaSharePolicy = z.infer<typeof quotaSharePolicy>;

/**
 * The reason the source is past its share, from its challenges over the window (client, then network; this
 * one included), or undefined within it. A plan with no units (an exhausted free plan) has no share to take.
 */
export function overShare(
  counts: readonly number[],
  monthlyQuota: number,
  policy: QuotaSharePolicy,
): string | undefined {
  if (!(monthlyQuota > 0)) return undefined;
  const [client = 0, network = 0] = counts;
  if (client > Math.max(policy.floor, policy.ip * monthlyQuota)) return 'quota.share_ip';
  if (network > Math.max(policy.floor, policy.prefix * monthlyQuota)) return 'quota.share_prefix';
  return undefined;
}

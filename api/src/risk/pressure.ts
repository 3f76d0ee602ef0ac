import { clientKey, parseIp } from '@gatehouse/core/ip';
import {
  DEFAULT_POW_POLICY,
  difficultyForSeconds,
  expectedAttempts,
  type PowParams,
  secondsForScore,
} from '@gatehouse/core/pow';
import { z } from 'zod';
import { quotaSharePolicy } from '../quotas/source-share.ts';
import { memoByIp } from './ip-memo.ts';
import { networkPrefix } from './rules/network.ts';

/**
 * The price of a pass rises with the pressure a source puts on an app (docs/security.md, "Pressure
 * pricing"). A source is the client (an IPv4 address, an IPv6 /64), its network (/24, /48) and, for a
 * hosting address, its provider's whole range. Each source has an allowance of challenges per sliding
 * hour at the base price, what people do; past it the proof-of-work doubles every `step` challenges, then
 * the request also gets an image (the hard tier), then it is refused until the count decays. The most
 * pressed source sets the price, so a fresh client on a quiet network always starts at the base price.
 */
export const PRESSURE_WINDOW_MS = 3_600_000;

// Strict at every level, as the rest of the policy: a misspelt key is refused, not silently ignored.
const source = (allowance: number, step: number) =>
  z
    .strictObject({
      /** Challenges per sliding hour at the base price. */
      allowance: z.number().min(0).default(allowance),
      /** Challenges past the allowance per doubling of the price. */
      step: z.number().positive().default(step),
    })
    .default({ allowance, step });

export const pressurePolicy = z
  .strictObject({
    ip: source(30, 10),
    prefix: source(100, 20),
    datacenter: source(100, 20),
    /** From this many doublings the request gets an image beside its proof-of-work (the hard tier). */
    image_at: z.number().min(0).max(40).default(4),
    /** From this many doublings the request is refused (403 request_rejected, Retry-After). */
    reject_at: z.number().positive().max(40).default(13),
    /** Each source's share of the app's monthly units (api/src/quotas/source-share.ts). */
    quota_share: quotaSharePolicy,
  })
  .refine((p) => p.image_at <= p.reject_at, {
    message: 'image_at must not exceed reject_at',
    path: ['image_at'],
  });

export type PressurePolicy = z.infer<typeof pressurePolicy>;
export const DEFAULT_PRESSURE: PressurePolicy = pressurePolicy.parse({});

export type PressureSource = 'ip' | 'prefix' | 'datacenter';

export interface Pressure {
  /** Doublings of the base price (0: the base price); the most pressed source's. */
  doublings: number;
  /** 2 ** doublings: what the proof-of-work's expected work is multiplied by. */
  multiplier: number;
  stage: 'base' | 'priced' | 'image' | 'reject';
  /** `pressure.<source>:+<doublings>` for each source past its allowance, rounded to a tenth. */
  reasons: string[];
  /** At `reject`: about how long until the most pressed source is back under the refusal. */
  retryAfterSeconds?: number;
  /** The source is past its share of the app's monthly units: served at the image stage, not counted. */
  overShare?: true;
}

const clientOf = memoByIp(clientKey);

/**
 * Address ranges never priced: a client seen from one of them is a proxy the deployment has not declared
 * (TRUSTED_PROXIES) or an internal caller, and pricing it would price everyone behind it at once.
 */
const INTERNAL_RANGES = new Set([
  'loopback',
  'private',
  'linkLocal',
  'uniqueLocal',
  'carrierGradeNat',
  'unspecified',
]);
export const internalAddress = memoByIp((ip) => {
  const addr = parseIp(ip);
  return addr !== null && INTERNAL_RANGES.has(addr.range());
});

export interface Sources {
  /** Counter keys of the sources, in order: client, network, and the provider of a hosting address. */
  keys: readonly string[];
  sources: readonly PressureSource[];
  /** The keys of the sources that hold a share of the app's monthly units: client and network. */
  shareKeys: readonly string[];
  /** The hosting provider the keys were made for. */
  provider?: string | undefined;
}

const NO_SOURCES: Sources = Object.freeze({ keys: [], sources: [], shareKeys: [] });
const WITH_PROVIDER: readonly PressureSource[] = Object.freeze(['ip', 'prefix', 'datacenter']);
const WITHOUT_PROVIDER: readonly PressureSource[] = Object.freeze(['ip', 'prefix']);

/**
 * An init's sources; none for an internal address. The same frozen object for the same app and address
 * (an init's hot path; bounded as velocityKeys: past the bounds the memo starts over).
 */
export function pressureSources(appId: string, ip: string, provider: string | undefined): Sources {
  if (internalAddress(ip)) return NO_SOURCES;
  let byIp = sourcesByApp.get(appId);
  if (!byIp) {
    if (sourcesByApp.size >= MAX_APPS) sourcesByApp.clear();
    byIp = new Map();
    sourcesByApp.set(appId, byIp);
  }
  let found = byIp.get(ip);
  // Another engine of the process may know other hosting ranges (tests): the provider must match too.
  if (!found || found.provider !== provider) {
    const shareKeys = Object.freeze([`ip:${appId}:${clientOf(ip)}`, `net:${appId}:${networkPrefix(ip)}`]);
    found = Object.freeze(
      provider === undefined
        ? { keys: shareKeys, sources: WITHOUT_PROVIDER, shareKeys, provider }
        : {
            keys: Object.freeze([...shareKeys, `dc:${appId}:${provider}`]),
            sources: WITH_PROVIDER,
            shareKeys,
            provider,
          },
    );
    if (byIp.size >= MAX_ADDRESSES) byIp.clear();
    byIp.set(ip, found);
  }
  return found;
}
const sourcesByApp = new Map<string, Map<string, Sources>>();
const MAX_APPS = 1_000;
const MAX_ADDRESSES = 10_000;

/** The price of one init from the sources' counts over the sliding hour (this init included). */
export function pressureOf(
  counts: readonly number[],
  sources: readonly PressureSource[],
  policy: PressurePolicy = DEFAULT_PRESSURE,
): Pressure {
  let doublings = 0;
  let retryAfterSeconds = 0;
  const reasons: string[] = [];
  sources.forEach((name, i) => {
    const count = counts[i] ?? 0;
    const { allowance, step } = policy[name];
    const d = Math.max(0, (count - allowance) / step);
    if (d <= 0) return;
    reasons.push(`pressure.${name}:+${Math.round(d * 10) / 10}`);
    doublings = Math.max(doublings, d);
    // The count decays about evenly over the window once the source stops: the share of it above the
    // refusal line is the share of the hour to wait.
    const refusedFrom = allowance + step * policy.reject_at;
    if (count >= refusedFrom) {
      const wait = Math.ceil(((count - refusedFrom + 1) / count) * (PRESSURE_WINDOW_MS / 1000));
      retryAfterSeconds = Math.max(retryAfterSeconds, wait);
    }
  });
  const stage =
    doublings >= policy.reject_at
      ? 'reject'
      : doublings >= policy.image_at && doublings > 0
        ? 'image'
        : doublings > 0
          ? 'priced'
          : 'base';
  const pressure: Pressure = { doublings, multiplier: 2 ** doublings, stage, reasons };
  if (stage === 'reject') pressure.retryAfterSeconds = Math.max(1, retryAfterSeconds);
  return pressure;
}

/**
 * The puzzle parameters of a priced request: the score's expected browser seconds times the multiplier,
 * never less than the tier's own puzzle (`base`, the hard tier's floor included). At the base price, `base`.
 */
export function pricedPowParams(base: PowParams, score: number, multiplier: number): PowParams {
  if (!(multiplier > 1)) return base;
  const seconds = secondsForScore(score, DEFAULT_POW_POLICY.curve) * multiplier;
  const priced = difficultyForSeconds(seconds);
  return expectedAttempts(priced) > expectedAttempts(base) ? priced : base;
}

/** The price of a source past its share of the month's units: at least the image stage, and not counted. */
export function sharePressure(pressure: Pressure, reason: string, policy: PressurePolicy): Pressure {
  if (pressure.stage === 'reject') return { ...pressure, overShare: true };
  const doublings = Math.max(pressure.doublings, policy.image_at);
  return {
    doublings,
    multiplier: 2 ** doublings,
    stage: 'image',
    reasons: [...pressure.reasons, `${reason}:+${Math.round(doublings * 10) / 10}`],
    overShare: true,
  };
}

import type { InitAnswer } from '@gatehouse/core/challenges';
import { randomId } from '@gatehouse/core/crypto';
import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { createPuzzle } from '@gatehouse/core/pow';
import { DEGRADED_TOKEN_TTL_SECONDS, MAX_TOKEN_LENGTH } from '@gatehouse/core/tokens';
import { z } from 'zod';
import { effectivePlan } from '../apps/plans.ts';
import type { Deps } from '../deps.ts';
import { countChallenge, countChallengeNow, refundChallenge } from '../quotas/monthly-quota.ts';
import { resolvePolicy } from '../risk/policy.ts';
import { pricedPowParams } from '../risk/pressure.ts';
import { clientSignals, type RequestFacts } from '../risk/signals.ts';
import { mintDegradedToken } from '../tokens/degraded-tokens.ts';
import {
  actionSchema,
  type CheckedServerToken,
  checkServerToken,
  spendServerTokenUse,
} from '../tokens/server-tokens.ts';
import { makeImage, makePow } from './kinds.ts';
import { keyboardPow } from './priced-pow.ts';
import { nextImageKind } from './retry-kind.ts';
import { CHALLENGE_TTL_SECONDS, type SealedChallenge, sealChallenge } from './sealed-challenge.ts';

export const initBody = z.object({
  app_key: z.string().min(1).max(128),
  action: actionSchema,
  server_token: z.string().min(1).max(MAX_TOKEN_LENGTH).optional(),
  platform: z
    .string()
    .regex(/^[a-z0-9_-]{1,32}$/, 'platform must be a short lowercase name such as web, android, ios')
    .default('web'),
  referer: z.string().max(2048).optional(),
  pkg: z.string().max(255).optional(),
  device_id: z.string().min(1).max(128).optional(),
  fingerprint: z.string().min(1).max(256).optional(),
  lang: z.string().max(35).optional(),
  signals: clientSignals.optional(),
  /** Customer data echoed by siteverify (Turnstile's `cdata`): at most 255 of its documented characters. */
  cdata: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,255}$/, 'cdata must be at most 255 letters, digits, _ or -')
    .optional(),
  /** A Privacy Pass token (base64url), where the client has one from an issuer this deployment trusts. */
  attestation: z.string().min(1).max(2048).optional(),
});
export type InitBody = z.infer<typeof initBody>;

/**
 * Challenge initialization: 1. the app, enabled, 2. allowed domains, 3. the server token (required or
 * presented: checked, its use not yet spent), 4. the risk score and tier, which may refuse (rate limited,
 * rejected), 5. the monthly quota (exhausted without overage: a `dg_` token, nothing counted and no
 * server-token use spent), 6. the server token's use, 7. the sealed challenge. Only what is served is
 * counted: a refusal at 3 or 4 spends neither the quota nor the server token.
 */
export async function initChallenge(
  deps: Deps,
  body: InitBody,
  facts: Omit<RequestFacts, 'platform'> & { origin?: string | undefined },
): Promise<InitAnswer> {
  // A cached app without a promise (the look-up is on every init); the database when it is not cached.
  const app = deps.apps.cachedByKey(body.app_key) ?? (await deps.apps.findByKey(body.app_key));
  if (!app) throw new GatehouseError('invalid_app_key');
  if (app.disabledAt) throw new GatehouseError('app_disabled');
  const referer = body.platform === 'web' ? (body.referer ?? null) : null;
  // The browser sets Origin and page scripts cannot change it; the body's referer is the page's claim.
  checkDomain(app, body.platform, facts.origin || referer);

  let serverToken: CheckedServerToken | undefined;
  if (body.server_token) {
    serverToken = await checkServerToken(deps.db, deps.keys, app, body.server_token, {
      action: body.action,
      ip: facts.ip,
      deviceId: body.device_id,
      fingerprint: body.fingerprint,
    });
  } else if (app.serverTokenRequired) {
    throw new GatehouseError('server_token_required');
  }

  const policy = resolvePolicy(app.riskPolicy);
  const attested =
    body.attestation !== undefined && (await deps.attestation?.verify(body.attestation)) === true;
  const riskInput = {
    appId: app.id,
    facts: { ...facts, platform: body.platform },
    signals: body.signals,
    policy,
    serverToken: serverToken !== undefined,
    attested,
    monthlyQuota: effectivePlan(app).monthlyQuota,
  };
  // Counts in this process: assessed without a promise; shared ones (Redis) awaited.
  const risk = deps.risk.assessNow(riskInput) ?? (await deps.risk.assess(riskInput));
  // Test apps always get the invisible tier at trivial difficulty (integrators' CI), never by default.
  const tier = app.testMode ? 'invisible' : risk.tier;
  // At debug: one line per init is a public endpoint's hot path; the console's decisions keep the record.
  if (deps.logger.isLevelEnabled('debug')) {
    deps.logger.debug(
      { app: app.appKey, action: body.action, score: risk.score, tier, reasons: risk.reasons },
      'risk',
    );
  }
  deps.decisions.record({
    app_key: app.appKey,
    action: body.action,
    ip: facts.ip,
    score: risk.score,
    tier,
    reasons: risk.reasons,
  });
  if (tier === 'reject') {
    countTier(deps, tier);
    // Too many challenges from the request's sources this hour (pressure pricing): until the count decays.
    if (risk.pressure.stage === 'reject' && risk.retryAfterSeconds) {
      throw new GatehouseError(
        'request_rejected',
        'Too many challenges from this network: try again later.',
        { 'Retry-After': String(risk.retryAfterSeconds) },
      );
    }
    // Refused for wrong answers in a row (answers.refused): for minutes only, and the client is told when.
    if (risk.retryAfterSeconds) {
      throw new GatehouseError(
        'request_rejected',
        'Too many wrong answers from this address: try again in a few minutes.',
        { 'Retry-After': String(risk.retryAfterSeconds) },
      );
    }
    throw new GatehouseError('request_rejected');
  }

  // Taken before anything is counted: an image init shed while the pool refills (503) spends no quota.
  const image =
    tier === 'invisible'
      ? undefined
      : await makeImage(await nextImageKind(deps, app.id, facts.ip, policy.image_kinds), deps.logger);
  // With overage the count cannot refuse: answered without waiting for its statement (write-behind), unless
  // a server token's use is spent below, whose failure gives the unit back (refundChallenge needs it written).
  // A source past its share of the month's units is served (at the image stage) without spending them.
  const quota = risk.pressure.overShare
    ? NOT_COUNTED
    : ((serverToken ? undefined : countChallengeNow(deps.db, app)) ?? (await countChallenge(deps.db, app)));
  // Degraded mode is a pass without a challenge, for people: a source already priced up gets a challenge.
  if (!quota.allowed && risk.pressure.stage === 'base') {
    countTier(deps, 'degraded');
    return {
      mode: 'degraded',
      pass_token: mintDegradedToken(deps.keys, app, body.action),
      expires_in: DEGRADED_TOKEN_TTL_SECONDS,
    };
  }
  if (serverToken) {
    // Another init spent the last use since the check: this one is refused, so its unit is given back.
    await spendServerTokenUse(deps.db, serverToken).catch(async (error: unknown) => {
      if (quota.allowed) await refundChallenge(deps.db, app);
      throw error;
    });
  }
  const uid = serverToken?.uid ?? null;
  countTier(deps, tier);

  const id = `ch_${randomId(12)}`;
  const exp = Math.floor(Date.now() / 1000) + CHALLENGE_TTL_SECONDS;
  const base = tier === 'image' ? undefined : makePow(app.testMode ? 0 : risk.score, tier, app.testMode);
  // Priced up by the sources' pressure (never a test app's): the same hash, more expected work.
  const pow =
    base && !app.testMode && risk.pressure.multiplier > 1
      ? { puzzle: createPuzzle(pricedPowParams(base.puzzle, risk.score, risk.pressure.multiplier)) }
      : base;
  // An image answered with the keyboard must carry this puzzle's solution (docs/accessibility.md).
  const kpow = image ? keyboardPow() : undefined;
  // Built field by field, not with conditional spreads (a temporary object and a generic copy each).
  const challenge: SealedChallenge = {
    v: 1,
    id,
    app: app.id,
    act: body.action,
    tier,
    ip: facts.ip,
    plat: body.platform,
    ref: referer,
    pkg: body.platform === 'web' ? null : (body.pkg ?? null),
    uid,
    score: risk.score,
    rsn: risk.reasons,
    exp,
  };
  if (body.cdata) challenge.cdata = body.cdata;
  if (pow) challenge.pow = pow.puzzle;
  if (image) challenge.img = { kind: image.kind, answer: image.answer };
  if (kpow) challenge.kpow = kpow;
  const result: InitAnswer = {
    mode: 'challenge',
    challenge_id: id,
    challenge: sealChallenge(deps.keys, challenge),
    tier,
    expires_in: CHALLENGE_TTL_SECONDS,
  };
  if (pow) result.pow = pow.puzzle;
  if (image) {
    // POST /v1/challenge/alternative offers a proof-of-work instead of the picture.
    result.image = kpow
      ? { kind: image.kind, view: image.view, alternative: true, keyboard_pow: kpow }
      : { kind: image.kind, view: image.view, alternative: true };
  }
  return result;
}

const NOT_COUNTED = Object.freeze({ allowed: false, used: 0 });

/** The challenge counter's child per tier, made once per metrics registry (prom-client hashes labels per inc). */
const tierCounters = new WeakMap<object, Map<string, { inc(): void }>>();
function countTier(deps: Deps, tier: string): void {
  const counter = deps.metrics.challenges;
  let children = tierCounters.get(counter);
  if (!children) {
    children = new Map();
    tierCounters.set(counter, children);
  }
  let child = children.get(tier);
  if (!child) {
    child = counter.labels({ tier });
    children.set(tier, child);
  }
  child.inc();
}

/** With allowed domains set, a web page (by its Origin, else its referer) must be on one of them or a subdomain. */
function checkDomain(app: App, platform: string, referer: string | null): void {
  if (platform !== 'web' || app.allowedDomains.length === 0) return;
  let host = '';
  try {
    host = referer ? new URL(referer).hostname.toLowerCase() : '';
  } catch {}
  const ok = app.allowedDomains.some((d) => {
    const domain = d.toLowerCase();
    return host === domain || host.endsWith(`.${domain}`);
  });
  if (!ok) throw new GatehouseError('domain_not_allowed');
}

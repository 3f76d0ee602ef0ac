import { GatehouseError } from '@gatehouse/core/errors';
import { answerOf } from '@gatehouse/core/http';
import type { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import {
  type IRateLimiterOptions,
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterRes,
} from 'rate-limiter-flexible';
import { z } from 'zod';

/**
 * Throttles failed authentication: wrong admin tokens, wrong or unknown app
 * credentials, and forged or unknown tokens at /v1/validate. Failures are counted per (source address,
 * credential), per source and per credential over a fixed window, in Redis when REDIS_URL is set (every
 * instance sees the same counts) and in memory otherwise, with rate-limiter-flexible.
 *
 * Who is refused (429 `rate_limited` with Retry-After, until the window ends):
 * 1. a source that failed `perSourceAndKey` times on one credential, for that credential;
 * 2. a source that failed `perSource` times over all credentials of its kind, for all of them;
 * 3. once a credential failed `perKey` times from anywhere, every source that failed on it at least once.
 * A source that has not failed is never refused, so the legitimate holder of a key under attack keeps
 * working from its own address. Admin tokens and app secrets are refused before they are checked (a
 * throttle that still evaluated the guess would still tell a brute force when it is right). Tokens at
 * validate are different: a genuine token is always judged, and only a forged or unknown one from a
 * throttled source gets the 429, so a bot pushing forged tokens through an integrator's form can never
 * get that integrator's real users refused.
 */
export interface AuthThrottleLimits {
  windowSeconds: number;
  perSourceAndKey: number;
  perSource: number;
  perKey: number;
  /** Forged or unknown tokens at validate, per (source, app). */
  tokensPerSourceAndApp: number;
}

export const authThrottleEnv = z.object({
  AUTH_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  AUTH_FAILURES_PER_SOURCE_AND_KEY: z.coerce.number().int().min(1).max(1_000_000).default(10),
  AUTH_FAILURES_PER_SOURCE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  AUTH_FAILURES_PER_KEY: z.coerce.number().int().min(1).max(1_000_000).default(100),
  AUTH_TOKEN_FAILURES_PER_SOURCE_AND_APP: z.coerce.number().int().min(1).max(1_000_000).default(60),
});

export function loadAuthThrottleLimits(env: NodeJS.ProcessEnv): AuthThrottleLimits {
  const result = authThrottleEnv.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = result.data;
  return {
    windowSeconds: e.AUTH_FAILURE_WINDOW_SECONDS,
    perSourceAndKey: e.AUTH_FAILURES_PER_SOURCE_AND_KEY,
    perSource: e.AUTH_FAILURES_PER_SOURCE,
    perKey: e.AUTH_FAILURES_PER_KEY,
    tokensPerSourceAndApp: e.AUTH_TOKEN_FAILURES_PER_SOURCE_AND_APP,
  };
}

type Kind = 'admin' | 'app' | 'token';
type Counter = RateLimiterMemory | RateLimiterRedis;

export class AuthThrottle {
  readonly #limits: AuthThrottleLimits;
  readonly #logger: Logger;
  readonly #counters = new Map<string, Counter>();
  readonly #redis: Redis | undefined;
  /** In memory, when the last failure recorded has left every counter's window (epoch ms). */
  #quietAfter = 0;

  constructor(limits: AuthThrottleLimits, logger: Logger, redis?: Redis) {
    this.#limits = limits;
    this.#logger = logger;
    this.#redis = redis;
  }

  /**
   * Rejects with 429 when `source` may not try `key` now. Counting in memory (no Redis), the counts are
   * this process's alone: while none was recorded within a window (and a second's margin for the counters'
   * timers), every counter is empty and nothing can refuse, so it answers undefined at once, with no
   * promise and no look-up: a successful authenticated request, validate's every call, must not pay
   * counter reads and their promises for nothing.
   */
  check(kind: Kind, source: string, key: string): Promise<void> | undefined {
    if (this.#redis === undefined && Date.now() >= this.#quietAfter) return undefined;
    return this.#check(kind, source, key);
  }

  async #check(kind: Kind, source: string, key: string): Promise<void> {
    const [pair, bySource, byKey] = await Promise.all([
      this.#get(kind, 'pair', `${source}|${key}`),
      this.#get(kind, 'source', source),
      this.#get(kind, 'key', key),
    ]);
    const limits = this.#limits;
    const pairLimit = kind === 'token' ? limits.tokensPerSourceAndApp : limits.perSourceAndKey;
    const blocking = [
      pair && pair.consumedPoints >= pairLimit ? pair : undefined,
      kind !== 'token' && bySource && bySource.consumedPoints >= limits.perSource ? bySource : undefined,
      byKey && byKey.consumedPoints >= limits.perKey && (pair?.consumedPoints ?? 0) > 0 ? byKey : undefined,
    ].filter((r): r is RateLimiterRes => r !== undefined);
    if (blocking.length === 0) return;
    const retryAfter = Math.max(1, Math.ceil(Math.max(...blocking.map((r) => r.msBeforeNext)) / 1000));
    throw new GatehouseError(
      'rate_limited',
      'Too many failed authentication attempts from this address. Retry after the time in Retry-After.',
      { 'Retry-After': String(retryAfter) },
    );
  }

  /** Records one failure of `source` on `key`. */
  async fail(kind: Kind, source: string, key: string): Promise<void> {
    this.#quietAfter = Date.now() + (this.#limits.windowSeconds + 1) * 1000;
    await Promise.all([
      this.#consume(kind, 'pair', `${source}|${key}`),
      this.#consume(kind, 'source', source),
      this.#consume(kind, 'key', key),
    ]);
  }

  #counter(kind: Kind, dimension: string): Counter {
    const name = `${kind}:${dimension}`;
    let counter = this.#counters.get(name);
    if (!counter) {
      // Counting never refuses by itself (check() decides), so the point budget is effectively unbounded.
      const options: IRateLimiterOptions = {
        keyPrefix: `gatehouse:authfail:${name}`,
        points: 1_000_000_000,
        duration: this.#limits.windowSeconds,
      };
      counter = this.#redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.#redis,
            // Redis unreachable: count in this process rather than not at all.
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.#counters.set(name, counter);
    }
    return counter;
  }

  async #get(kind: Kind, dimension: string, key: string): Promise<RateLimiterRes | null> {
    try {
      return await this.#counter(kind, dimension).get(key);
    } catch (error) {
      this.#logger.warn({ err: error }, 'authentication throttle: counts unreadable, not throttling');
      return null;
    }
  }

  async #consume(kind: Kind, dimension: string, key: string): Promise<void> {
    try {
      await this.#counter(kind, dimension).consume(key, 1);
    } catch (error) {
      if (error instanceof Error) {
        this.#logger.warn({ err: error }, 'authentication throttle: failure not recorded');
      }
    }
  }
}

/** Error codes that mean "wrong credential" for each kind. */
const ADMIN_FAILURES = new Set(['unauthorized']);
const APP_FAILURES = new Set(['invalid_app_key', 'invalid_app_secret']);
const TOKEN_FAILURES = new Set(['token_not_found']);

/**
 * Before the routes: refuses throttled admin and app credentials up front, records every failure the
 * routes answer, and turns a forged or unknown token's verdict into a 429 once its source is throttled.
 */
export function authThrottling(throttle: AuthThrottle): Middleware {
  return function authThrottling(ctx, next) {
    const path = ctx.path;
    // The standby's sync credential (/internal/*) is an admin-class secret: it unlocks every app's
    // credential hashes and the region's signing keys, so its failures count like the admin token's.
    const internal = path.startsWith('/internal/');
    const admin = internal || path.startsWith('/admin/');
    // The siteverify endpoints take the secret in the body and answer vendor-style (HTTP 200).
    const siteverify = ctx.method === 'POST' && path.endsWith('/siteverify');
    const appKey = ctx.get('X-App-Key').slice(0, 128);
    // No credential to check or charge: nothing to do, before or after. A token failure needs one too
    // (validate authenticates X-App-Key before it judges a token; siteverify is guarded above), which
    // api/test/auth-throttle-routes.test.ts checks on every route: the public endpoints (challenge init,
    // submit, preflights) pass without an async frame of their own, since they run on every request.
    if (!admin && !siteverify && !appKey) return next();
    const credential = internal ? 'standby-sync' : admin ? 'admin' : siteverify ? 'siteverify' : appKey;
    return guardedRequest(
      throttle,
      ctx,
      next,
      admin ? 'admin' : 'app',
      admin,
      siteverify,
      appKey,
      credential,
    );
  };
}

/**
 * A request with a credential: checked before (refused while its source is throttled), its failures
 * counted after. Promise handlers rather than an async frame, and no wait at all when the throttle has
 * nothing counted (validate's every call comes here).
 */
function guardedRequest(
  throttle: AuthThrottle,
  ctx: Parameters<Middleware>[0],
  next: () => Promise<unknown>,
  kind: 'admin' | 'app',
  admin: boolean,
  siteverify: boolean,
  appKey: string,
  key: string,
): Promise<void> {
  const source = ctx.ip;
  const answered = () =>
    next().then(
      () => {
        const answer = answerOf(ctx);
        const code = verdictError(answer);
        const token = code !== undefined && TOKEN_FAILURES.has(code);
        const secret = siteverify && vendorErrors(answer).includes('invalid-input-secret');
        if (!token && !secret) return undefined;
        return (async () => {
          if (token) await tokenFailure(throttle, source, appKey);
          if (secret) await throttle.fail(kind, source, key);
        })();
      },
      async (error: unknown) => {
        const code = error instanceof GatehouseError ? error.code : undefined;
        if (code && (admin ? ADMIN_FAILURES : APP_FAILURES).has(code)) {
          await throttle.fail(kind, source, key);
        }
        if (code && TOKEN_FAILURES.has(code)) await tokenFailure(throttle, source, appKey);
        throw error;
      },
    );
  const checked = throttle.check(kind, source, key);
  return checked === undefined ? answered() : checked.then(answered);
}

async function tokenFailure(throttle: AuthThrottle, source: string, appKey: string): Promise<void> {
  await throttle.fail('token', source, appKey);
  await throttle.check('token', source, appKey);
}

/** The vendor error codes of a siteverify answer (`error-codes`), if any. */
function vendorErrors(body: unknown): string[] {
  const codes = (body as { 'error-codes'?: unknown } | null)?.['error-codes'];
  return Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [];
}

/** The error code of a negative verdict answered with 200 (`data.error`), if any. */
function verdictError(body: unknown): string | undefined {
  const data = (body as { data?: { valid?: unknown; error?: unknown } } | null)?.data;
  return data && data.valid === false && typeof data.error === 'string' ? data.error : undefined;
}

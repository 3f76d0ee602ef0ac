import { GatehouseError } from '@gatehouse/core/errors';
import { answerOf } from '@gatehouse/core/http';
import type { Middleware } from 'koa';
import type { UsageRollup } from './usage.ts';

/** The token kind a pass token's prefix names (`pt`, `dg`, `offline`...), for the rollups. */
function tokenKind(token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  return /^([a-z]+)_/.exec(token)?.[1];
}

type Envelope = { code?: number; error?: string; data?: Record<string, unknown> };

/**
 * Counts, per app, what the public endpoints answered: challenges by tier (degraded and refused
 * included), answers solved or failed, validations by verdict and token kind. It reads the answer after
 * the handler ran, so the endpoints carry no bookkeeping, and only increments counters in memory.
 */
export function usageObserver(usage: UsageRollup): Middleware {
  const observe = (ctx: Parameters<Middleware>[0], route: string, outcome: Envelope | undefined) => {
    const body = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    const appKey =
      (ctx.state.app as { appKey?: string } | undefined)?.appKey ??
      (typeof body.app_key === 'string' ? body.app_key : undefined);
    if (appKey && outcome && typeof outcome === 'object') {
      for (const metric of metricsOf(route, outcome, body)) usage.record(appKey, metric);
    }
  };
  // Handlers on next()'s promise rather than an async frame per request.
  return function usageObserver(ctx, next) {
    const path = ctx.path;
    const route = ctx.method !== 'POST' ? '' : path.endsWith('/') ? path.replace(/\/+$/, '') : path;
    if (route !== '/v1/challenge/init' && route !== '/v1/challenge/submit' && route !== '/v1/validate') {
      return next();
    }
    return next().then(
      () => observe(ctx, route, answerOf(ctx) as Envelope | undefined),
      (error: unknown) => {
        observe(ctx, route, error instanceof GatehouseError ? { code: -1, error: error.code } : undefined);
        throw error;
      },
    );
  };
}

function metricsOf(route: string, outcome: Envelope, body: Record<string, unknown>): string[] {
  const data = outcome.data ?? {};
  if (route === '/v1/challenge/init') {
    if (outcome.code === 0)
      return [data.mode === 'degraded' ? 'challenge.degraded' : `challenge.${data.tier}`];
    if (outcome.error === 'request_rejected') return ['challenge.reject'];
    if (outcome.error === 'quota_exceeded') return ['challenge.quota_exceeded'];
    return [];
  }
  if (route === '/v1/challenge/submit') {
    if (outcome.code === 0) return ['submit.solved'];
    if (outcome.error === 'invalid_answer' || outcome.error === 'challenge_expired') return ['submit.failed'];
    return [];
  }
  // /v1/validate: a verdict is an answer (valid, or valid: false with its code); auth failures are not counted.
  const verdict = data.valid === true ? 'valid' : (data.error ?? outcome.error);
  if (typeof verdict !== 'string' || verdict.startsWith('invalid_app') || verdict === 'invalid_request') {
    return [];
  }
  const kind = tokenKind(body.pass_token);
  return [`validate.${verdict}`, ...(kind ? [`token.${kind}`] : [])];
}

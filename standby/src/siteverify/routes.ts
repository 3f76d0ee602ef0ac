import { GatehouseError } from '@gatehouse/core/errors';
import { type OfflineChecker, validateOfflineToken } from '@gatehouse/core/offline-validation';
import { tokenKind } from '@gatehouse/core/tokens';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { appBySecret } from '../apps.ts';
import type { MainHealth } from '../main-health.ts';
import type { SnapshotKeeper } from '../snapshot.ts';
import { cdataOfOfflineToken } from './offline.ts';
import {
  type Fields,
  failureAnswer,
  nulIn,
  parseSiteverify,
  readFields,
  SITEVERIFY_PATHS,
  type SiteverifyRequest,
  tooLong,
} from './request.ts';
import { type Outcome, problemFor, type Vendor, vendorAnswer } from './vendors.ts';

export interface SiteverifyDeps {
  snapshots: SnapshotKeeper;
  health: MainHealth;
  checker: () => OfflineChecker;
  /** Where tokens this host cannot answer for (`pt_`, `dg_`) are verified while the main API is up. */
  mainApiUrl: string | undefined;
  logger: Logger;
  bodyLimitBytes: number;
  /** The shared store failing: fail closed with 503 (app.ts). */
  storeGuard: <T>(fn: () => Promise<T>) => Promise<T>;
}

/**
 * How long the main API gets to answer a forwarded siteverify before this host says it failed: shorter
 * while the probes see it down (it is still asked: a slow probe must not cost a verification).
 */
const FORWARD_TIMEOUT_MS = 5000;
const FORWARD_TIMEOUT_DOWN_MS = 1500;
/** Marks a request a fallback host forwarded. */
const FORWARDED_HEADER = 'x-gatehouse-forwarded';

/**
 * The three vendors' siteverify paths on the fallback role, so that a backend configured with one verify
 * URL (the fallback host's) keeps verifying through an outage: an `offline_` token is verified here, in
 * the shared store, whatever the main API's state (exactly once across the main API and every fallback);
 * any other token is the main API's, and is forwarded to it. While it does not answer such a token cannot
 * be answered for: HTTP 503, `success: false` (never a pass).
 */
export function siteverifyRoutes(router: Router, deps: SiteverifyDeps): void {
  for (const [vendor, path] of Object.entries(SITEVERIFY_PATHS) as [Vendor, string][]) {
    router.post(path, async function siteverify(ctx) {
      const fields = await readFields(ctx, deps.bodyLimitBytes);
      if (fields && nulIn(fields)) {
        throw new GatehouseError('invalid_request', 'A field must not contain a NUL character (\\u0000).');
      }
      const parsed = parseSiteverify(vendor, fields);
      let outcome: Outcome;
      try {
        if (!parsed.ok) outcome = parsed.outcome;
        else if (tokenKind(parsed.request.response) === 'offline')
          outcome = await verifyHere(deps, parsed.request);
        else return await forward(ctx, deps, path, vendor, fields as Fields);
      } catch (error) {
        if (!(error instanceof GatehouseError) || error.status !== 200) {
          if (!(error instanceof GatehouseError)) deps.logger.error({ err: error }, 'siteverify failed');
          ctx.body = failureAnswer(ctx, vendor, error);
          return;
        }
        outcome = { ok: false, problems: [problemFor(error.code)] };
      }
      ctx.status = 200;
      ctx.body = vendorAnswer(vendor, outcome);
    });
  }
}

/** An `offline_` token against the snapshot's apps and the shared store, as the main API checks it. */
async function verifyHere(deps: SiteverifyDeps, request: SiteverifyRequest): Promise<Outcome> {
  const app = appBySecret(deps.snapshots, request.secret);
  if (!app || app.disabled) return { ok: false, problems: ['invalid-secret'] };
  if (request.sitekey && deps.snapshots.app(request.sitekey)?.id !== app.id) {
    return { ok: false, problems: ['sitekey-mismatch'] };
  }
  if (tooLong(request.response)) return { ok: false, problems: ['invalid-response'] };
  const verdict = await deps.storeGuard(() =>
    validateOfflineToken(
      deps.checker(),
      { id: app.id, clientIpPolicy: app.client_ip_policy },
      request.response,
      { clientIp: request.clientIp, idempotencyKey: request.idempotencyKey },
    ),
  );
  if (!verdict.valid) return { ok: false, problems: ['invalid-response'] };
  return {
    ok: true,
    verdict: {
      action: verdict.action,
      captcha_args: verdict.captcha_args,
      cdata: cdataOfOfflineToken(request.response),
      test_mode: app.test_mode,
    },
  };
}

/**
 * The main API's answer for a token only it can check, relayed as it came (status and body). Its fields
 * travel as JSON (the main API reads every form the vendors send); the caller's address is appended to
 * X-Forwarded-For, for a main API that trusts this host as a proxy (TRUSTED_PROXIES).
 */
async function forward(ctx: Context, deps: SiteverifyDeps, path: string, vendor: Vendor, fields: Fields) {
  const unavailable = (message: string) => {
    ctx.status = 503;
    ctx.set('Retry-After', '5');
    ctx.body = vendorAnswer(vendor, { ok: false, problems: ['internal-error'] });
    deps.logger.warn({ path }, message);
  };
  if (!deps.mainApiUrl) return unavailable('siteverify: no main API to forward a pt_ or dg_ token to');
  // A MAIN_API_URL that leads back to a fallback host must not forward in a circle.
  if (ctx.get(FORWARDED_HEADER)) {
    return unavailable('siteverify: a forwarded request reached a fallback host: check MAIN_API_URL');
  }
  const timeout = (await deps.health.servingNow()) ? FORWARD_TIMEOUT_DOWN_MS : FORWARD_TIMEOUT_MS;
  const forwardedFor = [ctx.get('X-Forwarded-For'), ctx.req.socket.remoteAddress ?? '']
    .filter(Boolean)
    .join(', ');
  let res: Response;
  try {
    res = await fetch(`${deps.mainApiUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': forwardedFor,
        [FORWARDED_HEADER]: '1',
      },
      body: JSON.stringify(fields),
      signal: AbortSignal.timeout(timeout),
    });
  } catch {
    return unavailable('siteverify: the main API did not answer a forwarded verification');
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return unavailable(`siteverify: the main API answered HTTP ${res.status} without JSON`);
  }
  ctx.status = res.status;
  const retryAfter = res.headers.get('retry-after');
  if (retryAfter) ctx.set('Retry-After', retryAfter);
  ctx.body = body;
}

import { alternativeBody, alternativeSettings } from '@gatehouse/core/alternative';
import { constantTimeEqual } from '@gatehouse/core/crypto';
import { envelope, GatehouseError, success } from '@gatehouse/core/errors';
import {
  type ClientAddressConfig,
  clientAddressFrom,
  errorEnvelope,
  isInternalRequest,
  openCors,
  readBody,
  requestContext,
  utf8Only,
} from '@gatehouse/core/http';
import { isIp } from '@gatehouse/core/ip';
import { genuineRefusalAlarm } from '@gatehouse/core/offline-alarm';
import type { ConsumptionStore } from '@gatehouse/core/offline-consumption';
import type { OfflineTrust } from '@gatehouse/core/offline-trust';
import {
  checkOfflineToken,
  type OfflineChecker,
  validateOfflineToken,
} from '@gatehouse/core/offline-validation';
import { offlineKeysFor } from '@gatehouse/core/standby-keys';
import { MAX_TOKEN_LENGTH, tokenKind } from '@gatehouse/core/tokens';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { authenticate, findApp, requireSnapshot } from './apps.ts';
import { failedCredentials } from './failed-credentials.ts';
import type { MainHealth, Mode } from './main-health.ts';
import { requestOfflineAlternative } from './offline-alternative.ts';
import { startOfflineChallenge, submitOfflineChallenge } from './offline-challenges.ts';
import { siteverifyBoundary } from './siteverify/request.ts';
import { siteverifyRoutes } from './siteverify/routes.ts';
import type { SnapshotKeeper } from './snapshot.ts';
import type { StandbyStoreState } from './store-check.ts';
import type { WidgetMirror } from './widget-mirror.ts';

export interface StandbyDeps {
  /** The region this standby serves, reported by /status (the main API's console shows it). */
  region?: string;
  health: MainHealth;
  snapshots: SnapshotKeeper;
  /** The main API's widget files, served by the bypass role; none in some unit tests. */
  widget?: WidgetMirror;
  store: ConsumptionStore;
  /** The outage log and revoked keys, in the shared store (core/src/offline-trust.ts). */
  trust: OfflineTrust;
  logger: Logger;
  /** Bearer token for the operator's mode override. */
  controlToken: () => string;
  /**
   * STANDBY_INTERNAL_PORT is set: the operator's `POST /internal/v1/mode` only through that listener (no
   * Ingress routes it, a NetworkPolicy opens it to the operator only); the public listeners answer 404 for
   * /internal/*, as for a path that does not exist. Unset: served on every listener.
   */
  separateInternal?: boolean;
  /** ALTERNATIVE_POW_SECONDS (config.ts); unset: read from the environment. */
  alternativeSeconds?: number;
  /** KEYBOARD_POW_SECONDS (config.ts); unset: the main API's default. */
  keyboardSeconds?: number;
  /** Where the fallback role forwards siteverify requests for tokens only the main API can check. */
  mainApiUrl?: string;
  /** Whether outage tokens survive a recovery (store-check.ts): /readyz and /status say so. */
  storeState?: StandbyStoreState;
  /** TRUSTED_PROXIES (config.ts); unset: no proxy, the socket peer is the client. */
  clientAddress?: ClientAddressConfig;
}

const BODY_LIMIT_BYTES = 16_384;

const action = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'action must be 1 to 64 characters of letters, digits, _ . : or -');
const initBody = z.object({
  app_key: z.string().min(1).max(128),
  action,
  platform: z
    .string()
    .regex(/^[a-z0-9_-]{1,32}$/)
    .default('web'),
  referer: z.string().max(2048).optional(),
  /** Turnstile's `cdata`, as on the main API: carried in the token, echoed by siteverify. */
  cdata: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,255}$/, 'cdata must be at most 255 letters, digits, _ or -')
    .optional(),
});
const submitBody = z.object({
  app_key: z.string().min(1).max(128),
  challenge_id: z.string().min(1).max(64),
  challenge: z.string().min(1).max(4096),
  pow: z.unknown().optional(),
  answer: z.unknown().optional(),
});
const validateBody = z.object({
  pass_token: z.string().min(1).max(MAX_TOKEN_LENGTH),
  client_ip: z.string().refine(isIp, 'must be an IPv4 or IPv6 address').optional(),
  idempotency_key: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,128}$/)
    .optional(),
  /** The action the caller expects, as on the main API's /v1/validate (our SDKs send it here too). */
  action: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
    .optional(),
});

/**
 * One standby role as a Koa app: `bypass` (end-user side: offline verification, `offline_` tokens) or
 * `fallback` (server side: POST /api/validate). Public endpoints answer `service_online` while the main
 * API is up; health, status and the operator's mode switch always answer.
 */
export function createStandbyApp(role: 'bypass' | 'fallback', deps: StandbyDeps): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  const alarm = genuineRefusalAlarm(deps.logger);
  const checker = (): OfflineChecker => ({
    keys: deps.snapshots.keyring,
    trust: deps.trust,
    store: deps.store,
    onGenuineRefused: alarm,
  });
  /** The region's active key; refused when revoked (the shared store says so before any new snapshot). */
  const mintingKeys = async () => {
    requireSnapshot(deps.snapshots);
    const entry = deps.snapshots.keyring.active();
    if (!entry || (await deps.trust.isRevoked(entry.kid))) {
      throw new GatehouseError(
        'service_unavailable',
        "This standby's signing key is revoked or missing: it mints again after its next snapshot.",
      );
    }
    return offlineKeysFor(entry);
  };
  const challengeKeys = () => {
    requireSnapshot(deps.snapshots);
    const keys = deps.snapshots.keyring.challengeKeys();
    if (keys.length === 0)
      throw new GatehouseError('service_unavailable', 'This standby has no signing key.');
    return keys;
  };

  // The host's own address, as `npm start` prints it, opened in a browser or by curl: what answers here.
  router.get('/', function root(ctx) {
    ctx.body = {
      code: 0,
      data: {
        service: 'gatehouse-standby',
        role,
        links: { status: '/status', health: '/healthz', ready: '/readyz' },
      },
    };
  });
  router.get('/healthz', function healthz(ctx) {
    ctx.body = { status: 'ok', role };
  });
  router.get('/readyz', async function readyz(ctx) {
    requireSnapshot(deps.snapshots);
    await deps.store.ping().catch(() => {
      throw new GatehouseError('service_unavailable', 'The standby shared store is unreachable.');
    });
    ctx.body = { status: 'ready', role, ...(deps.storeState ? { store: deps.storeState } : {}) };
  });
  router.get('/status', function status(ctx) {
    ctx.body = {
      role,
      ...(deps.region ? { region: deps.region } : {}),
      ...deps.health.status(),
      snapshot: deps.snapshots.status(),
      ...(deps.storeState ? { store: deps.storeState } : {}),
    };
  });
  const modeFailures = failedCredentials();
  router.post('/internal/v1/mode', async function setMode(ctx) {
    // A source that keeps presenting wrong tokens is refused before the token is even compared.
    await modeFailures.check(ctx.ip);
    const header = ctx.get('Authorization');
    const presented = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!presented || !constantTimeEqual(presented, deps.controlToken())) {
      await modeFailures.fail(ctx.ip);
      throw new GatehouseError('unauthorized');
    }
    const { mode } = readBody(ctx, z.object({ mode: z.enum(['auto', 'serve', 'online']) }));
    deps.health.setMode(mode as Mode);
    deps.logger.info({ mode }, 'standby mode set by the operator');
    ctx.body = success(deps.health.status());
  });

  const online = serviceOnline(deps.health);
  if (role === 'bypass') {
    // The widget's files, whatever the main API's state: a page whose main API is down loads them here.
    router.get('/widget/:file', function widgetFile(ctx) {
      if (!deps.widget?.serve(ctx, ctx.params.file ?? ''))
        throw new GatehouseError('not_found', 'No such widget file.');
    });
    router.options('/v1/challenge/:step', openCors, function preflight(ctx) {
      ctx.status = 204;
    });
    router.post('/v1/challenge/init', openCors, online, async function init(ctx) {
      const body = readBody(ctx, initBody);
      const found = findApp(deps.snapshots, body.app_key);
      const referer = body.platform === 'web' ? (body.referer ?? (ctx.get('Referer') || null)) : null;
      ctx.body = success(
        await startOfflineChallenge(
          { challenge: challengeKeys()[0]! },
          found,
          {
            action: body.action,
            ip: ctx.ip,
            platform: body.platform,
            referer,
            cdata: body.cdata || undefined,
          },
          deps.keyboardSeconds,
        ),
      );
    });
    router.post('/v1/challenge/alternative', openCors, online, async function alternative(ctx) {
      const body = readBody(ctx, alternativeBody);
      const found = findApp(deps.snapshots, body.app_key);
      const base = deps.alternativeSeconds ?? alternativeSettings().baseSeconds;
      ctx.body = success(
        await storeGuard(() =>
          requestOfflineAlternative(challengeKeys(), deps.store, found, body, ctx.ip, base),
        ),
      );
    });
    router.post('/v1/challenge/submit', openCors, online, async function submit(ctx) {
      const body = readBody(ctx, submitBody);
      const found = findApp(deps.snapshots, body.app_key);
      ctx.body = success(
        await storeGuard(() =>
          submitOfflineChallenge({ mint: mintingKeys, challenge: challengeKeys() }, deps.store, found, body),
        ),
      );
    });
  } else {
    // DESIGN.md: an offline_ token minted during a recorded outage is validated here whatever
    // the main API's state (the origin's SDKs send offline_ tokens only to their backup URL); anything
    // else gets service_online while the main API is up.
    const onlineUnlessOutageToken: Middleware = async (ctx, next) => {
      if ((await deps.health.servingNow()) || (await mintedDuringOutage(ctx.request.body))) return next();
      ctx.status = 503;
      ctx.body = envelope('service_online');
    };
    const mintedDuringOutage = async (body: unknown) => {
      const token = (body as { pass_token?: unknown } | undefined)?.pass_token;
      if (typeof token !== 'string' || tokenKind(token) !== 'offline' || !deps.snapshots.snapshot)
        return false;
      return checkOfflineToken(checker(), token).then(
        () => true,
        () => false,
      );
    };
    router.post('/api/validate', onlineUnlessOutageToken, async function validate(ctx) {
      const body = readBody(ctx, validateBody);
      const found = authenticate(deps.snapshots, ctx.get('X-App-Key'), ctx.get('X-App-Secret'));
      // pt_ and dg_ tokens live in the main database: only the main API can answer for them.
      if (tokenKind(body.pass_token) !== 'offline') throw new GatehouseError('token_not_found');
      const verdict = await storeGuard(() =>
        validateOfflineToken(
          checker(),
          { id: found.id, clientIpPolicy: found.client_ip_policy },
          body.pass_token,
          {
            clientIp: body.client_ip,
            idempotencyKey: body.idempotency_key,
          },
        ),
      );
      // As the main API: checked after consumption, so a token presented at the wrong flow is spent.
      if (body.action !== undefined && verdict.action !== body.action) {
        throw new GatehouseError('token_action_mismatch', undefined, {}, { action: verdict.action });
      }
      ctx.body = success(verdict);
    });
    // The vendors' siteverify paths, answering through an outage (siteverify/routes.ts).
    siteverifyRoutes(router, {
      snapshots: deps.snapshots,
      health: deps.health,
      checker,
      mainApiUrl: deps.mainApiUrl,
      logger: deps.logger,
      bodyLimitBytes: BODY_LIMIT_BYTES,
      storeGuard,
    });
  }

  app.use(
    clientAddressFrom(deps.clientAddress ?? { trustedProxies: { kind: 'none' }, header: 'x-forwarded-for' }),
  );
  app.use(requestContext(deps.logger));
  app.use(errorEnvelope(deps.logger));
  app.use(siteverifyBoundary());
  app.use(async function internalOnly(ctx, next) {
    if (deps.separateInternal && ctx.path.startsWith('/internal/') && !isInternalRequest(ctx.req))
      throw new GatehouseError('not_found');
    await next();
  });
  app.use(async function notFound(ctx, next) {
    await next();
    if (ctx.status === 404 && ctx.body == null) throw new GatehouseError('not_found');
  });
  app.use(utf8Only());
  // Forms for the siteverify paths (each other route takes JSON only: readBody checks the media type).
  app.use(
    bodyParser({
      enableTypes: ['json', 'form'],
      jsonLimit: BODY_LIMIT_BYTES,
      formLimit: BODY_LIMIT_BYTES,
      jsonStrict: true,
    }),
  );
  app.use(router.routes());
  app.use(
    router.allowedMethods({ throw: true, methodNotAllowed: () => new GatehouseError('method_not_allowed') }),
  );
  app.silent = true;
  return app;

  /** The shared store failing means single use cannot be guaranteed: fail closed, say so. */
  async function storeGuard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof GatehouseError) throw error;
      deps.logger.error({ err: error }, 'standby shared store failed');
      throw new GatehouseError(
        'service_unavailable',
        'The standby shared store is unreachable: try again shortly.',
      );
    }
  }
}

/**
 * Spec: while the main API is up, the standby answers HTTP 503 `service_online`; retrying does not help.
 * "Up" is what this process and its peers agree on: one of them that has seen the outage is enough.
 */
function serviceOnline(health: MainHealth): Middleware {
  return async function serviceOnline(ctx, next) {
    if (!(await health.servingNow())) {
      ctx.status = 503;
      ctx.body = envelope('service_online');
      return;
    }
    await next();
  };
}

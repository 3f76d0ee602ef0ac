import { ERROR_STATUS, type ErrorCode, TOKEN_VERDICT_CODES } from '@gatehouse/core/errors';
import { STANDBY_STORE_SCHEMA as STANDBY_STORE } from '@gatehouse/standby/store-check';
import { appSettingsPatch, createAppBody } from './apps/settings.ts';
import { alternativeBody } from './challenges/alternative.ts';
import { initBody } from './challenges/init.ts';
import { submitBody } from './challenges/submit.ts';
import { consolePaths } from './console/openapi-paths.ts';
import { pathParameter, requestSchema } from './openapi-request.ts';
import { OPENAPI_TAGS, withTags } from './openapi-tags.ts';
import { appKeyParam, rotateBody } from './routes/admin.ts';
import { siteverifyPaths } from './routes/siteverify-openapi.ts';
import { rotateStandbyKeyBody, standbyKidParam } from './routes/standby-keys.ts';
import { validateBody } from './routes/validate.ts';
import { issueServerTokenBody } from './tokens/server-tokens.ts';

/**
 * The OpenAPI 3.1 document of the main API. Request schemas come from the zod schemas the handlers use,
 * so the document cannot drift from what is enforced; response schemas are written here and every test
 * response is checked against them (api/test/openapi-contract.test.ts).
 */
const body = requestSchema;
const appKeyPath = pathParameter('appKey', appKeyParam);

/**
 * Where an app's answer leads (OpenAPI links): every operation on the app its `app_key` names. A client
 * generator or a stateful fuzzer follows them from a create (or a key rotation) to the rest of the app's
 * life.
 */
const appLinks = Object.fromEntries(
  (
    [
      ['GetApp', '/admin/v1/apps/{appKey}', 'get'],
      ['UpdateApp', '/admin/v1/apps/{appKey}', 'patch'],
      ['RotateSecret', '/admin/v1/apps/{appKey}/rotate-secret', 'post'],
      ['RotateKey', '/admin/v1/apps/{appKey}/rotate-key', 'post'],
      ['DisableApp', '/admin/v1/apps/{appKey}/disable', 'post'],
      ['EnableApp', '/admin/v1/apps/{appKey}/enable', 'post'],
    ] as const
  ).map(([name, path, method]) => [
    name,
    {
      // A JSON pointer in a URI fragment: `~` and `/` escaped (RFC 6901), then braces percent-encoded.
      operationRef: `#/paths/${encodeURIComponent(path.replaceAll('~', '~0').replaceAll('/', '~1'))}/${method}`,
      parameters: { appKey: '$response.body#/data/app_key' },
    },
  ]),
);
const kidPath = pathParameter('kid', standbyKidParam);

/** The error envelope; `codes` narrows `error` to what one response can carry. */
const errorEnvelope = (codes: readonly string[] = Object.keys(ERROR_STATUS)) => ({
  type: 'object',
  required: ['code', 'error', 'message', 'msg', 'data'],
  properties: {
    code: { const: -1 },
    error: { enum: codes },
    message: { type: 'string' },
    msg: { type: 'string', description: 'Same text as message, for SDKs of the origin service.' },
    data: {
      type: 'object',
      description:
        'The code again (where the origin service SDKs read it); a token verdict adds valid: false and what is known of the token.',
      required: ['error'],
      properties: { error: { enum: codes }, valid: { const: false } },
    },
  },
  additionalProperties: false,
});

const ok = (data: object) => ({
  type: 'object',
  required: ['code', 'data'],
  properties: { code: { const: 0 }, data },
});

const captchaArgs = {
  type: 'object',
  required: ['platform', 'user_ip', 'referer', 'pkg', 'solved_at', 'risk_score'],
  properties: {
    platform: { type: 'string' },
    user_ip: { type: 'string' },
    referer: { type: ['string', 'null'] },
    pkg: { type: ['string', 'null'] },
    solved_at: { type: 'integer' },
    risk_score: { type: 'integer', minimum: 0, maximum: 100 },
    risk_reasons: { type: 'array', items: { type: 'string' } },
  },
};

const passVerdict = {
  type: 'object',
  required: ['valid', 'challenge_id', 'action', 'uid', 'captcha_args'],
  properties: {
    valid: { type: 'boolean' },
    challenge_id: { type: 'string', pattern: '^ch_' },
    action: { type: 'string' },
    uid: { type: ['string', 'null'] },
    captcha_args: captchaArgs,
    client_ip_check: { enum: ['match', 'mismatch', 'unverifiable'] },
    risk: {
      type: 'object',
      description:
        "What the risk engine made of the request the token's challenge started from: the score (0-100) and the rule reasons behind it, each `rule:+points` (e.g. `network.datacenter:+25`).",
      required: ['score', 'reasons'],
      properties: {
        score: { type: 'integer', minimum: 0, maximum: 100 },
        reasons: { type: 'array', items: { type: 'string' } },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

const degradedVerdict = {
  type: 'object',
  required: ['valid', 'degraded', 'reason', 'expired'],
  properties: {
    valid: { const: false },
    degraded: { const: true },
    reason: { const: 'quota_exhausted' },
    expired: { type: 'boolean' },
  },
  additionalProperties: false,
};

/** An `offline_` token minted by the standby during an outage, validated here after recovery. */
const offlineVerdict = {
  type: 'object',
  required: ['valid', 'challenge_id', 'action', 'uid', 'captcha_args', 'offline'],
  properties: {
    ...passVerdict.properties,
    uid: { type: 'null' },
    offline: { const: true },
  },
  additionalProperties: false,
};

const challengeStart = {
  oneOf: [
    {
      type: 'object',
      required: ['mode', 'pass_token', 'expires_in'],
      properties: {
        mode: { const: 'degraded' },
        pass_token: { type: 'string', pattern: '^dg_' },
        expires_in: { type: 'integer' },
      },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['mode', 'challenge_id', 'challenge', 'tier', 'expires_in'],
      properties: {
        mode: { const: 'challenge' },
        challenge_id: { type: 'string', pattern: '^ch_' },
        challenge: { type: 'string', description: 'Sealed (AES-256-GCM): send it back unchanged.' },
        tier: { enum: ['invisible', 'image', 'hard'] },
        expires_in: { type: 'integer' },
        pow: {
          type: 'object',
          description: 'Proof-of-work puzzle (core/src/pow): solve it in a Web Worker.',
        },
        image: {
          type: 'object',
          required: ['kind', 'view'],
          properties: {
            kind: { enum: ['slide', 'click', 'select'] },
            view: { type: 'object' },
            alternative: {
              const: true,
              description: 'POST /v1/challenge/alternative offers a proof-of-work instead of the picture.',
            },
            keyboard_pow: {
              type: 'object',
              description:
                'An answer made with the keyboard must carry this puzzle\'s solution as answer.pow (slide: {x, input: "keyboard", trajectory, pow}; click: {input: "keyboard", picks: [clicks], pow}; select: {input: "keyboard", picks: [tile indices], pow}).',
            },
          },
        },
      },
      additionalProperties: false,
    },
  ],
};

const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };
const appView = {
  type: 'object',
  required: [
    'app_key',
    'name',
    'plan',
    'effective_plan',
    'monthly_quota',
    'overage_allowed',
    'subscription_expires_at',
    'server_token_required',
    'test_mode',
    'pass_token_ttl',
    'client_ip_policy',
    'risk_policy',
    'allowed_domains',
    'disabled',
    'secret_rotation_grace_until',
    'previous_app_key',
    'key_rotation_grace_until',
    'created_at',
  ],
  properties: {
    app_key: { type: 'string', pattern: '^ak_' },
    app_secret: { type: 'string', description: 'Only in the answers to create and rotate-secret.' },
    name: { type: 'string' },
    plan: { type: 'string' },
    effective_plan: { type: 'string' },
    monthly_quota: { type: 'integer', minimum: 0 },
    overage_allowed: { type: 'boolean' },
    subscription_expires_at: nullableDateTime,
    server_token_required: { type: 'boolean' },
    test_mode: { type: 'boolean' },
    pass_token_ttl: { type: 'integer' },
    client_ip_policy: { enum: ['report', 'reject'] },
    risk_policy: { type: 'object' },
    allowed_domains: { type: 'array', items: { type: 'string' } },
    managed_by: {
      description:
        'The declaration the app is managed from (the operator sets {kind: "App", namespace, name}); null when managed by hand.',
      oneOf: [
        {
          type: 'object',
          required: ['kind', 'namespace', 'name'],
          properties: { kind: { type: 'string' }, namespace: { type: 'string' }, name: { type: 'string' } },
          additionalProperties: false,
        },
        { type: 'null' },
      ],
    },
    disabled: { type: 'boolean' },
    secret_rotation_grace_until: nullableDateTime,
    previous_app_key: {
      type: ['string', 'null'],
      description: 'The key replaced by the last rotate-key, while it still names the app; null otherwise.',
    },
    key_rotation_grace_until: nullableDateTime,
    created_at: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
};

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
/** One response per HTTP status, each naming (and allowing) exactly the error codes given for it. */
const errors = (...codes: ErrorCode[]) => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, object> = {};
  for (const [status, list] of byStatus) {
    out[String(status)] = { description: list.join(', '), ...json(errorEnvelope(list)) };
  }
  return out;
};
const appAuth = [{ appKey: [], appSecret: [] }];
const standbyKeyView = {
  type: 'object',
  required: ['kid', 'region', 'status', 'created_at', 'retired_at', 'revoked_at'],
  properties: {
    kid: { type: 'string' },
    region: { type: 'string' },
    status: { type: 'string', enum: ['active', 'retired', 'revoked'] },
    created_at: { type: 'string', format: 'date-time' },
    retired_at: { type: ['string', 'null'], format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
  },
  additionalProperties: false,
};
const adminAuth = [{ admin: [] }];
/** The standby's own credential (STANDBY_SYNC_TOKEN), never the admin token. */
const syncAuth = [{ standbySync: [] }];
/** Errors any endpoint with a request body can answer. */
const bodyErrors: ErrorCode[] = ['invalid_request', 'unsupported_media_type', 'payload_too_large'];
const appAuthErrors: ErrorCode[] = ['invalid_app_key', 'invalid_app_secret', 'app_disabled'];

/**
 * Failed authentication is throttled per source and credential (api/src/auth-throttle.ts): every operation
 * behind the admin token or app credentials can answer 429 `rate_limited` with Retry-After, besides any
 * limit of its own. Added here, once, so no such operation can leave it out.
 */
function withAuthThrottling<T extends Record<string, object>>(paths: T): T {
  for (const item of Object.values(paths) as Record<string, unknown>[]) {
    for (const op of Object.values(item) as { security?: object[]; responses?: Record<string, object> }[]) {
      const schemes = (op?.security ?? []).flatMap((s) => Object.keys(s));
      if (!op.responses || !(schemes.includes('admin') || schemes.includes('appKey'))) continue;
      const current = op.responses['429'] as
        | {
            content?: {
              'application/json'?: { schema?: { properties?: { error?: { enum?: ErrorCode[] } } } };
            };
          }
        | undefined;
      const codes = current?.content?.['application/json']?.schema?.properties?.error?.enum ?? [];
      op.responses['429'] = {
        ...errors(...new Set<ErrorCode>([...codes, 'rate_limited']))['429'],
        headers: {
          'Retry-After': {
            description: 'Seconds to wait before retrying',
            schema: { type: 'integer', minimum: 0 },
          },
        },
      };
    }
  }
  return paths;
}

export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Gatehouse API',
    version: '1.0.0',
    description:
      'Human/bot verification. Every error answers the envelope {code: -1, error, message}; SDKs should read the body, not only the status.',
  },
  components: {
    securitySchemes: {
      appKey: { type: 'apiKey', in: 'header', name: 'X-App-Key' },
      appSecret: { type: 'apiKey', in: 'header', name: 'X-App-Secret' },
      admin: { type: 'http', scheme: 'bearer' },
      standbySync: {
        type: 'http',
        scheme: 'bearer',
        description: 'STANDBY_SYNC_TOKEN; the admin token is refused',
      },
    },
    schemas: { ErrorEnvelope: errorEnvelope(), CaptchaArgs: captchaArgs },
  },
  tags: OPENAPI_TAGS,
  paths: withAuthThrottling({
    ...siteverifyPaths(errors(...bodyErrors, 'database_unavailable')),
    '/v1/validate': {
      post: {
        summary: 'Validate a pass token (pt_) or a degraded token (dg_). Server-to-server.',
        security: appAuth,
        requestBody: { required: true, ...json(body(validateBody)) },
        responses: {
          '200': {
            description:
              'A verdict: valid, degraded, or a negative verdict on the token (the error envelope with data.valid false; token_action_mismatch when `action` was sent and differs).',
            ...json({
              oneOf: [
                ok({ oneOf: [passVerdict, degradedVerdict, offlineVerdict] }),
                errorEnvelope(TOKEN_VERDICT_CODES),
              ],
            }),
          },
          ...errors(
            ...bodyErrors,
            ...appAuthErrors,
            'service_unavailable',
            'database_unavailable',
            'rate_limited',
          ),
        },
      },
    },
    '/v1/server/challenge/issue': {
      post: {
        summary: 'Issue a server token (sct_) for challenge initialization. Server-to-server.',
        security: appAuth,
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': { schema: body(issueServerTokenBody) },
            'application/json': { schema: body(issueServerTokenBody) },
          },
        },
        responses: {
          '200': {
            description: 'The server token',
            ...json(
              ok({
                type: 'object',
                required: ['server_token', 'expires_in', 'issued_at'],
                properties: {
                  server_token: { type: 'string', pattern: '^sct_' },
                  expires_in: { type: 'integer' },
                  issued_at: { type: 'integer', description: 'Unix seconds' },
                },
                additionalProperties: false,
              }),
            ),
          },
          ...errors(...bodyErrors, ...appAuthErrors, 'database_unavailable'),
          '429': {
            ...errors('rate_limit_exceeded', 'rate_limited')['429'],
            headers: {
              'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
            },
          },
        },
      },
    },
    '/v1/challenge/init': {
      post: {
        summary:
          'Start a challenge (called by the widget, public app key only). Scored here; the tier is chosen server-side. See docs/protocol.md.',
        requestBody: { required: true, ...json(body(initBody)) },
        responses: {
          '200': {
            description: 'A challenge, or a dg_ token when the quota is exhausted',
            ...json(ok(challengeStart)),
          },
          ...errors(
            ...bodyErrors,
            'invalid_app_key',
            'app_disabled',
            'domain_not_allowed',
            'server_token_required',
            'server_token_invalid',
            'server_token_expired',
            'server_token_exhausted',
            'server_token_action_mismatch',
            'server_token_binding_mismatch',
            'request_rejected',
            'rate_limited',
            'database_unavailable',
            // An image challenge asked for faster than the workers draw them is shed, with Retry-After.
            'service_unavailable',
          ),
        },
      },
    },
    '/v1/challenge/alternative': {
      post: {
        summary:
          'The accessible alternative to an image challenge: a longer proof-of-work instead of the picture, one per challenge, limited per address and hour (docs/accessibility.md). Submit its solution with the original challenge as answer: {alternative: ticket, pow: solution}.',
        requestBody: { required: true, ...json(body(alternativeBody)) },
        responses: {
          '200': {
            description: 'The sealed ticket and its puzzle',
            ...json(
              ok({
                type: 'object',
                required: ['ticket', 'pow', 'seconds', 'expires_in'],
                properties: {
                  ticket: { type: 'string' },
                  pow: { type: 'object', description: 'Proof-of-work puzzle (core/src/pow).' },
                  seconds: { type: 'number', description: 'Expected solve time of one browser core' },
                  expires_in: { type: 'integer' },
                },
                additionalProperties: false,
              }),
            ),
          },
          ...errors(
            ...bodyErrors,
            'invalid_app_key',
            'app_disabled',
            'challenge_not_found',
            'challenge_expired',
            'database_unavailable',
          ),
          '429': {
            ...errors('rate_limited')['429'],
            headers: {
              'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
            },
          },
        },
      },
    },
    '/v1/challenge/submit': {
      post: {
        summary:
          'Submit the proof-of-work solution and/or the image answer; one solved challenge yields one pass token.',
        requestBody: { required: true, ...json(body(submitBody)) },
        responses: {
          '200': {
            description: 'The pass token',
            ...json(
              ok({
                type: 'object',
                required: ['pass_token', 'challenge_id', 'expires_in'],
                properties: {
                  pass_token: { type: 'string', pattern: '^pt_' },
                  challenge_id: { type: 'string', pattern: '^ch_' },
                  expires_in: { type: 'integer' },
                },
                additionalProperties: false,
              }),
            ),
          },
          ...errors(
            ...bodyErrors,
            'invalid_app_key',
            'app_disabled',
            'challenge_not_found',
            'challenge_expired',
            'invalid_answer',
            'database_unavailable',
          ),
        },
      },
    },
    '/v1/standby': {
      get: {
        summary: 'Where the standby hosts are (SDKs and the widget fail over to them on their own)',
        responses: {
          '200': {
            description: 'Standby URLs',
            ...json(
              ok({
                type: 'object',
                required: ['bypass', 'fallback'],
                properties: {
                  bypass: { type: 'array', items: { type: 'string' } },
                  fallback: { type: 'array', items: { type: 'string' } },
                },
              }),
            ),
          },
        },
      },
    },
    '/internal/v1/standby/snapshot': {
      get: {
        summary:
          "The snapshot a region's standby keeps (apps, secret hashes, the region's signing keys); the standby sync credential only, never the admin token",
        security: syncAuth,
        parameters: [
          {
            name: 'region',
            in: 'query',
            required: false,
            schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,31}$', default: 'default' },
          },
        ],
        responses: {
          '200': { description: 'The snapshot', ...json(ok({ type: 'object' })) },
          ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/widget/{file}': {
      parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'The web widget: gatehouse.js (loader) and its lazily loaded chunks',
        responses: {
          '200': {
            description: 'JavaScript',
            content: { 'text/javascript': { schema: { type: 'string' } } },
          },
          ...errors('not_found'),
        },
      },
    },
    '/healthz': {
      get: {
        summary: 'Liveness',
        responses: {
          '200': {
            description: 'Alive',
            ...json({
              type: 'object',
              required: ['status'],
              properties: { status: { const: 'ok' } },
              additionalProperties: false,
            }),
          },
        },
      },
    },
    '/readyz': {
      get: {
        description:
          'standby_store.warning: a configuration that loses outage tokens after a recovery (STANDBY_STORE_URL unset while standby hosts are published); not a reason to be unready.',
        summary: 'Readiness: the database answers',
        responses: {
          '200': {
            description: 'Ready',
            ...json({
              type: 'object',
              required: ['status', 'database'],
              properties: {
                status: { const: 'ready' },
                database: { enum: ['pglite', 'postgres'] },
                standby_store: STANDBY_STORE,
              },
              additionalProperties: false,
            }),
          },
          ...errors('database_unavailable'),
        },
      },
    },
    '/metrics': {
      get: { summary: 'Prometheus metrics', responses: { '200': { description: 'Metrics text' } } },
    },
    '/openapi.json': {
      get: {
        summary: 'This document',
        responses: {
          '200': {
            description: 'OpenAPI 3.1',
            ...json({
              type: 'object',
              required: ['openapi', 'info', 'paths'],
              properties: {
                openapi: { type: 'string' },
                info: { type: 'object' },
                paths: { type: 'object' },
              },
            }),
          },
        },
      },
    },
    '/admin/v1/apps': {
      get: {
        summary: 'List apps, a page at a time in creation order; follow next_cursor until it is null',
        security: adminAuth,
        parameters: [
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
          },
          {
            name: 'cursor',
            in: 'query',
            required: false,
            description: 'The next_cursor of the previous page',
            schema: { type: 'string', maxLength: 200 },
          },
        ],
        responses: {
          '200': {
            description: 'One page of apps',
            ...json(
              ok({
                type: 'object',
                required: ['apps', 'next_cursor'],
                properties: {
                  apps: { type: 'array', items: appView },
                  next_cursor: { type: ['string', 'null'] },
                },
                additionalProperties: false,
              }),
            ),
          },
          ...errors('invalid_request', 'unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
      post: {
        summary: 'Create an app; the answer is the only time its secret is shown',
        security: adminAuth,
        requestBody: { required: true, ...json(body(createAppBody)) },
        responses: {
          '201': { description: 'Created', ...json(ok(appView)), links: appLinks },
          ...errors(...bodyErrors, 'unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/apps/{appKey}': {
      parameters: [appKeyPath],
      get: {
        summary: 'One app',
        security: adminAuth,
        responses: {
          '200': { description: 'The app', ...json(ok(appView)) },
          ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
      patch: {
        summary: 'Change settings',
        security: adminAuth,
        requestBody: { required: true, ...json(body(appSettingsPatch)) },
        responses: {
          '200': { description: 'The app', ...json(ok(appView)) },
          ...errors(...bodyErrors, 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/apps/{appKey}/rotate-secret': {
      parameters: [appKeyPath],
      post: {
        summary: 'New secret; the previous one keeps working for grace_seconds (default one day)',
        security: adminAuth,
        requestBody: {
          required: false,
          ...json(body(rotateBody)),
        },
        responses: {
          '200': { description: 'The app and its new secret', ...json(ok(appView)) },
          ...errors(...bodyErrors, 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/apps/{appKey}/rotate-key': {
      parameters: [appKeyPath],
      post: {
        summary:
          'New public key; the previous one keeps naming the app (widgets, validation, standby, this API) for grace_seconds (default one day). Refused for an app managed by a custom resource.',
        security: adminAuth,
        requestBody: { required: false, ...json(body(rotateBody)) },
        responses: {
          '200': { description: 'The app under its new key', ...json(ok(appView)), links: appLinks },
          ...errors(...bodyErrors, 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/apps/{appKey}/disable': {
      parameters: [appKeyPath],
      post: {
        summary: 'Disable an app: its credentials stop working at once',
        security: adminAuth,
        responses: {
          '200': { description: 'The app', ...json(ok(appView)) },
          ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/apps/{appKey}/enable': {
      parameters: [appKeyPath],
      post: {
        summary: 'Enable a disabled app',
        security: adminAuth,
        responses: {
          '200': { description: 'The app', ...json(ok(appView)) },
          ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    ...consolePaths({ json, ok, errors, bodyErrors, adminAuth, appKeyPath }),
    '/admin/v1/standby-keys': {
      get: {
        summary:
          'The standby keyring: one offline_ signing key per region, with its state (never the key itself)',
        security: adminAuth,
        responses: {
          '200': {
            description: 'Keys',
            ...json(
              ok({
                type: 'object',
                required: ['keys'],
                properties: { keys: { type: 'array', items: standbyKeyView } },
                additionalProperties: false,
              }),
            ),
          },
          ...errors('unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/standby-keys/rotate': {
      post: {
        summary: 'New active key for a region; the previous one only verifies the tokens it minted before',
        security: adminAuth,
        requestBody: { required: true, ...json(body(rotateStandbyKeyBody)) },
        responses: {
          '200': { description: 'The new key', ...json(ok(standbyKeyView)) },
          ...errors(...bodyErrors, 'unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/standby-keys/sync-credential': {
      post: {
        summary:
          "The sync credential for one region's standby: it reads that region's snapshot only (derived from STANDBY_SYNC_TOKEN)",
        security: adminAuth,
        requestBody: { required: true, ...json(body(rotateStandbyKeyBody)) },
        responses: {
          '200': {
            description: 'The credential (a secret)',
            ...json(
              ok({
                type: 'object',
                required: ['region', 'sync_token'],
                properties: { region: { type: 'string' }, sync_token: { type: 'string', pattern: '^sr_' } },
                additionalProperties: false,
              }),
            ),
          },
          ...errors(...bodyErrors, 'unauthorized'),
        },
      },
    },
    '/admin/v1/standby-keys/{kid}/revoke': {
      parameters: [kidPath],
      post: {
        summary:
          'Revoke a key: every checker refuses its tokens from the next request on; an active key is replaced',
        security: adminAuth,
        responses: {
          '200': { description: 'The revoked key', ...json(ok(standbyKeyView)) },
          ...errors(
            'invalid_request',
            'unauthorized',
            'not_found',
            'service_unavailable',
            'database_unavailable',
          ),
        },
      },
    },
  }),
} as const;

// Every operation in its group (openapi-tags.ts), whichever file declared it.
withTags(openapiDocument.paths);

import { STANDBY_STORE_SCHEMA as STANDBY_STORE } from '@gatehouse/standby/store-check';
import { requestSchema } from '../openapi-request.ts';
import { previewBody } from './admin-routes.ts';
import { signInBody } from './session-routes.ts';

/** What openapi.ts lends to describe the console's admin endpoints like its own. */
interface Helpers {
  json: (schema: object) => object;
  ok: (data: object) => object;
  errors: (...codes: never[]) => Record<string, object>;
  bodyErrors: readonly string[];
  adminAuth: object[];
  appKeyPath: object;
}

const query = (name: string, schema: object, description: string) => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
});

const decision = {
  type: 'object',
  required: ['at', 'app_key', 'action', 'ip', 'score', 'tier', 'reasons'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    app_key: { type: 'string' },
    action: { type: 'string' },
    ip: { type: 'string' },
    score: { type: 'integer' },
    tier: { type: 'string' },
    reasons: { type: 'array', items: { type: 'string' } },
  },
};

const session = {
  type: 'object',
  required: ['csrf_token', 'expires_at', 'idle_expires_at'],
  properties: {
    csrf_token: { type: 'string' },
    expires_at: { type: 'string', format: 'date-time', description: 'The end, whatever the activity' },
    idle_expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'The end if no request comes before (each request moves it)',
    },
  },
};

/** The console's admin endpoints (api/src/console/admin-routes.ts) in the OpenAPI document. */
export function consolePaths(h: Helpers) {
  const errors = h.errors as (...codes: string[]) => Record<string, object>;
  return {
    '/admin/v1/apps/{appKey}/usage': {
      parameters: [h.appKeyPath],
      get: {
        summary: "An app's usage per hour (from the rollups) and this month's quota use, for the console",
        security: h.adminAuth,
        parameters: [
          query('hours', { type: 'integer', minimum: 1, maximum: 744, default: 24 }, 'Hours back from now'),
        ],
        responses: {
          '200': {
            description:
              'Counts per hour, oldest first (metric names: challenge.TIER, submit.solved|failed, validate.VERDICT, token.KIND)',
            ...h.json(
              h.ok({
                type: 'object',
                required: ['app_key', 'hours', 'quota'],
                properties: {
                  app_key: { type: 'string' },
                  hours: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['hour', 'counts'],
                      properties: {
                        hour: { type: 'string', format: 'date-time' },
                        counts: { type: 'object', additionalProperties: { type: 'integer' } },
                      },
                    },
                  },
                  quota: {
                    type: 'object',
                    required: ['period', 'used', 'monthly_quota'],
                    properties: {
                      period: { type: 'string' },
                      used: { type: 'integer' },
                      monthly_quota: { type: 'integer' },
                    },
                  },
                },
              }),
            ),
          },
          ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable'),
        },
      },
    },
    '/admin/v1/usage': {
      get: {
        summary:
          "Every app's usage summed over the last hours, and the totals across apps, for the console's overview",
        security: h.adminAuth,
        parameters: [
          query('hours', { type: 'integer', minimum: 1, maximum: 744, default: 24 }, 'Hours back from now'),
        ],
        responses: {
          '200': {
            description: 'Counts per app (current and previous key together) and in all',
            ...h.json(
              h.ok({
                type: 'object',
                required: ['hours', 'apps', 'totals'],
                properties: {
                  hours: { type: 'integer' },
                  apps: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['app_key', 'name', 'disabled', 'test_mode', 'counts'],
                      properties: {
                        app_key: { type: 'string' },
                        name: { type: 'string' },
                        disabled: { type: 'boolean' },
                        test_mode: { type: 'boolean' },
                        counts: { type: 'object', additionalProperties: { type: 'integer' } },
                      },
                    },
                  },
                  totals: { type: 'object', additionalProperties: { type: 'integer' } },
                },
              }),
            ),
          },
          ...errors('invalid_request', 'unauthorized', 'database_unavailable'),
        },
      },
    },
    '/admin/v1/risk/decisions': {
      get: {
        summary: "This instance's most recent risk decisions with their reasons, newest first",
        security: h.adminAuth,
        parameters: [
          query('app_key', { type: 'string', pattern: '^ak_[A-Za-z0-9_-]{1,64}$' }, 'Only this app'),
          query('limit', { type: 'integer', minimum: 1, maximum: 500, default: 50 }, 'At most this many'),
        ],
        responses: {
          '200': {
            description: 'Decisions',
            ...h.json(
              h.ok({
                type: 'object',
                required: ['decisions'],
                properties: { decisions: { type: 'array', items: decision } },
              }),
            ),
          },
          ...errors('invalid_request', 'unauthorized'),
        },
      },
    },
    '/admin/v1/risk/preview': {
      post: {
        summary:
          "What a visitor would get under an app's policy (or a proposed one): score, tier, reasons; counts nothing",
        security: h.adminAuth,
        requestBody: { required: true, ...h.json(requestSchema(previewBody)) },
        responses: {
          '200': {
            description: 'The decision the engine would take',
            ...h.json(
              h.ok({
                type: 'object',
                required: ['score', 'tier', 'test_mode', 'image_kinds', 'reasons', 'policy'],
                properties: {
                  score: { type: 'integer', minimum: 0, maximum: 100 },
                  tier: { enum: ['invisible', 'image', 'hard', 'reject'] },
                  test_mode: { type: 'boolean' },
                  image_kinds: { type: 'array', items: { type: 'string' } },
                  reasons: { type: 'array', items: { type: 'string' } },
                  policy: { type: 'object' },
                },
              }),
            ),
          },
          ...errors(...h.bodyErrors, 'unauthorized', 'not_found', 'database_unavailable'),
        },
      },
    },
    '/admin/v1/session': {
      post: {
        summary: "The console's sign-in: exchanges the admin token for a session cookie",
        description:
          "Sets an HttpOnly, SameSite=Strict cookie (`__Host-gatehouse_console`, Secure, over HTTPS; `gatehouse_console` over plain HTTP) that the admin API accepts in place of the bearer token. A request signed in by the cookie that changes something must carry the session's `csrf_token` in `X-CSRF-Token`. The session ends at sign-out, after 30 minutes without a request, 12 hours after sign-in, or when the admin token changes. A wrong token counts as a failed admin authentication.",
        security: [],
        requestBody: { required: true, ...h.json(requestSchema(signInBody)) },
        responses: {
          '201': { description: 'Signed in', ...h.json(h.ok(session)) },
          ...errors(...h.bodyErrors, 'unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
      get: {
        summary: "The cookie's console session, with its CSRF token (401 when there is none or it ended)",
        security: [],
        responses: {
          '200': { description: 'Signed in', ...h.json(h.ok(session)) },
          ...errors('unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
      delete: {
        summary: "Signs the console out: the cookie's session ends on every instance (needs X-CSRF-Token)",
        security: [],
        parameters: [
          {
            name: 'X-CSRF-Token',
            in: 'header',
            required: true,
            schema: { type: 'string' },
            description: 'The csrf_token of the session',
          },
        ],
        responses: {
          '200': {
            description: 'Signed out',
            ...h.json(
              h.ok({
                type: 'object',
                required: ['signed_out'],
                properties: { signed_out: { const: true } },
              }),
            ),
          },
          ...errors('unauthorized', 'database_unavailable', 'rate_limited'),
        },
      },
    },
    '/admin/v1/standby/status': {
      get: {
        summary: "Each published standby host's own state (its /status); unreachable hosts are unknown",
        security: h.adminAuth,
        responses: {
          '200': {
            description: 'Hosts',
            ...h.json(
              h.ok({
                type: 'object',
                required: ['hosts'],
                properties: {
                  api_store: STANDBY_STORE,
                  hosts: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['role', 'url', 'reachable'],
                      properties: {
                        role: { type: 'string' },
                        url: { type: 'string' },
                        reachable: { type: 'boolean' },
                      },
                    },
                  },
                },
              }),
            ),
          },
          ...errors('unauthorized'),
        },
      },
    },
  };
}

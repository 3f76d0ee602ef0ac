import { ERROR_STATUS, type ErrorCode } from '@gatehouse/core/errors';

/*
 * The pieces the routes' documented answers are made of: the error envelope, the success wrapper, the
 * views of apps, keys and verdicts. Response schemas are checked against every answer the tests receive
 * (api/test/openapi-contract.test.ts).
 */

/** The error envelope; `codes` narrows `error` to what one response can carry. */
export const errorEnvelope = (codes: readonly string[] = Object.keys(ERROR_STATUS)) => ({
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

export const ok = (data: object) => ({
  type: 'object',
  required: ['code', 'data'],
  properties: { code: { const: 0 }, data },
});

export const captchaArgs = {
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

export const passVerdict = {
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

export const degradedVerdict = {
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
export const offlineVerdict = {
  type: 'object',
  required: ['valid', 'challenge_id', 'action', 'uid', 'captcha_args', 'offline'],
  properties: {
    ...passVerdict.properties,
    uid: { type: 'null' },
    offline: { const: true },
  },
  additionalProperties: false,
};

export const challengeStart = {
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

export const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };
export const appView = {
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

export const json = (schema: object) => ({ content: { 'application/json': { schema } } });
/** One response per HTTP status, each naming (and allowing) exactly the error codes given for it. */
export const errors = (...codes: ErrorCode[]) => {
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
export const appAuth = [{ appKey: [], appSecret: [] }];
export const standbyKeyView = {
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
export const adminAuth = [{ admin: [] }];
/** The standby's own credential (STANDBY_SYNC_TOKEN), never the admin token. */
export const syncAuth = [{ standbySync: [] }];
/** Errors any endpoint with a request body can answer. */
export const bodyErrors: ErrorCode[] = ['invalid_request', 'unsupported_media_type', 'payload_too_large'];
export const appAuthErrors: ErrorCode[] = ['invalid_app_key', 'invalid_app_secret', 'app_disabled'];

import { ERROR_STATUS, type ErrorCode, TOKEN_VERDICT_CODES } from '@gatehouse/core/errors';
import { z } from 'zod';
import type { Answer, RouteDoc } from './route-table.ts';

/*
 * The answer shapes the routes share, declared once as zod schemas: the error envelope, the success
 * wrapper, the views of apps, keys and verdicts, the headers answers carry. The route table turns them into
 * the OpenAPI document (z.toJSONSchema), and every answer the tests receive is checked against that
 * document (api/test/openapi-contract.test.ts). None of them validates an answer at run time.
 */

const ALL_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** A date the API writes with `toISOString()`. */
export const dateTime = z.string().meta({ format: 'date-time' });

/** Counts by metric name (the usage rollups). */
export const counts = z.record(z.string(), z.int());

/** The error envelope; `codes` narrows `error` to what one response can carry. */
export const errorEnvelope = (codes: readonly ErrorCode[] = ALL_CODES) => {
  const code = z.enum(codes as [ErrorCode, ...ErrorCode[]]);
  return z.strictObject({
    code: z.literal(-1),
    error: code,
    message: z.string(),
    msg: z.string().meta({ description: 'Same text as message, for SDKs of the origin service.' }),
    data: z.looseObject({ error: code, valid: z.literal(false).optional() }).meta({
      description:
        'The code again (where the origin service SDKs read it); a token verdict adds valid: false and what is known of the token.',
    }),
  });
};

/** The success wrapper of every answer in Gatehouse's own shape. */
export const ok = <T extends z.ZodType>(data: T) => z.looseObject({ code: z.literal(0), data });

export const retryAfter = z.int().min(0).meta({ description: 'Seconds to wait before retrying' });

/** One answer per HTTP status, each naming (and allowing) exactly the error codes given for it. */
export function errors(...codes: ErrorCode[]): Record<string, Answer> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const out: Record<string, Answer> = {};
  for (const [status, list] of byStatus) {
    out[String(status)] = {
      description: list.join(', '),
      json: errorEnvelope(list),
      codes: list,
      // Every limit answers when to come back.
      ...(status === 429 ? { headers: { 'Retry-After': retryAfter } } : {}),
    };
  }
  return out;
}

/** Errors any endpoint with a request body can answer. */
export const bodyErrors: ErrorCode[] = ['invalid_request', 'unsupported_media_type', 'payload_too_large'];
export const appAuthErrors: ErrorCode[] = ['invalid_app_key', 'invalid_app_secret', 'app_disabled'];

export const appAuth = [{ appKey: [], appSecret: [] }];
export const adminAuth = [{ admin: [] }];
/** The standby's own credential (STANDBY_SYNC_TOKEN), never the admin token. */
export const syncAuth = [{ standbySync: [] }];

const riskScore = z.int().min(0).max(100);
const reasons = z.array(z.string());

export const captchaArgs = z.looseObject({
  platform: z.string(),
  user_ip: z.string(),
  referer: z.string().nullable(),
  pkg: z.string().nullable(),
  solved_at: z.int(),
  risk_score: riskScore,
  risk_reasons: reasons.optional(),
});

const verdictFields = {
  valid: z.boolean(),
  challenge_id: z.string().regex(/^ch_/),
  action: z.string(),
  uid: z.string().nullable(),
  captcha_args: captchaArgs,
  client_ip_check: z.enum(['match', 'mismatch', 'unverifiable']).optional(),
  risk: z.strictObject({ score: riskScore, reasons }).optional().meta({
    description:
      "What the risk engine made of the request the token's challenge started from: the score (0-100) and the rule reasons behind it, each `rule:+points` (e.g. `network.datacenter:+25`).",
  }),
};

export const passVerdict = z.strictObject(verdictFields);

export const degradedVerdict = z.strictObject({
  valid: z.literal(false),
  degraded: z.literal(true),
  reason: z.literal('quota_exhausted'),
  expired: z.boolean(),
});

/** An `offline_` token minted by the standby during an outage, validated here after recovery. */
export const offlineVerdict = z.strictObject({ ...verdictFields, uid: z.null(), offline: z.literal(true) });

/** What a token validation answers: a verdict, or a negative verdict on the token in the envelope. */
export const tokenVerdict = z.xor([
  ok(z.xor([passVerdict, degradedVerdict, offlineVerdict])),
  errorEnvelope(TOKEN_VERDICT_CODES),
]);

/** `data` of POST /v1/server/challenge/issue. */
export const serverTokenAnswer = z.strictObject({
  server_token: z.string().regex(/^sct_/),
  expires_in: z.int(),
  issued_at: z.int().meta({ description: 'Unix seconds' }),
});

const nullableDateTime = dateTime.nullable();

export const appView = z.strictObject({
  app_key: z.string().regex(/^ak_/),
  app_secret: z.string().optional().meta({ description: 'Only in the answers to create and rotate-secret.' }),
  name: z.string(),
  plan: z.string(),
  effective_plan: z.string(),
  monthly_quota: z.int().min(0),
  overage_allowed: z.boolean(),
  subscription_expires_at: nullableDateTime,
  server_token_required: z.boolean(),
  test_mode: z.boolean(),
  pass_token_ttl: z.int(),
  client_ip_policy: z.enum(['report', 'reject']),
  risk_policy: z.looseObject({}),
  allowed_domains: z.array(z.string()),
  managed_by: z
    .strictObject({ kind: z.string(), namespace: z.string(), name: z.string() })
    .nullable()
    .optional()
    .meta({
      description:
        'The declaration the app is managed from (the operator sets {kind: "App", namespace, name}); null when managed by hand.',
    }),
  disabled: z.boolean(),
  secret_rotation_grace_until: nullableDateTime,
  previous_app_key: z.string().nullable().meta({
    description: 'The key replaced by the last rotate-key, while it still names the app; null otherwise.',
  }),
  key_rotation_grace_until: nullableDateTime,
  created_at: dateTime,
});

export const standbyKeyView = z.strictObject({
  kid: z.string(),
  region: z.string(),
  status: z.enum(['active', 'retired', 'revoked']),
  created_at: dateTime,
  retired_at: nullableDateTime,
  revoked_at: nullableDateTime,
});

/**
 * Failed authentication is throttled per source and credential (api/src/auth-throttle.ts): every operation
 * behind the admin token or app credentials can answer 429 `rate_limited` with Retry-After, besides any
 * limit of its own. Added here, once (the document's builder applies it), so no such operation can leave
 * it out.
 */
export function withAuthThrottling(doc: RouteDoc): Record<string, Answer> {
  const schemes = (doc.security ?? []).flatMap((s) => Object.keys(s));
  if (!(schemes.includes('admin') || schemes.includes('appKey'))) return doc.responses;
  return { ...doc.responses, ...errors(...(doc.responses['429']?.codes ?? []), 'rate_limited') };
}

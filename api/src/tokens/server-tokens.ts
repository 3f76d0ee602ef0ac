import { randomId } from '@gatehouse/core/crypto';
import { type Database, regional } from '@gatehouse/core/db';
import { type App, serverTokens } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { ipAddressSchema, normalizeIp } from '@gatehouse/core/ip';
import type { TokenKeys } from '@gatehouse/core/tokens';
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { serverTokenAnswer } from '../answers.ts';

/**
 * Spec: ttl defaults to 300 s, at most 900; a larger ttl is clamped to 900 (the origin's SDKs document a
 * server-side bound, so migrating integrations send more) and `expires_in` says what was granted.
 * max_uses defaults to 10; 1000 is our documented maximum, and more is refused.
 */
export const SERVER_TOKEN_LIMITS = {
  ttlDefault: 300,
  ttlMax: 900,
  maxUsesDefault: 10,
  maxUsesMax: 1000,
} as const;

const ACTION = /^[A-Za-z0-9_.:-]{1,64}$/;
export const actionSchema = z
  .string()
  .regex(ACTION, 'action must be 1 to 64 characters of letters, digits, _ . : or -');

/**
 * Form bodies carry strings, JSON bodies numbers: a decimal string is read as the number it spells, then
 * checked as one. The OpenAPI document shows the number's schema (an integer and its bounds), which is
 * also how OpenAPI describes a form field, so the two cannot disagree on a bound.
 */
export const wholeNumber = (schema: z.ZodNumber) =>
  z.preprocess((v) => (typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : v), schema);

const intField = (min: number, max: number, fallback: number) =>
  wholeNumber(z.number().int().min(min).max(max))
    .default(fallback)
    .meta({
      description: `Integer from ${min} to ${max}, default ${fallback}; a value out of range is rejected, never clamped.`,
    });

/** Free text stored and compared later: no control characters (PostgreSQL refuses NUL) and no lone surrogates. */
const textField = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine(
      (v) => v.isWellFormed() && ![...v].some((c) => c < ' ' || c === '\x7f'),
      'must not contain control characters',
    )
    // What the refinement checks, for the OpenAPI document (lone surrogates cannot be said in a pattern).
    .meta({ pattern: '^[^\\u0000-\\u001f\\u007f]*$' });

const ipField = ipAddressSchema.transform((v) => normalizeIp(v)!);

/** Like intField, but a value above `max` is granted as `max` instead of refused. */
const clampedIntField = (min: number, max: number, fallback: number) =>
  wholeNumber(z.number().int().min(min))
    .transform((v) => Math.min(v, max))
    .default(fallback)
    .meta({
      description: `Integer of at least ${min}, default ${fallback}; above ${max} it is clamped to ${max}, and expires_in says so.`,
    });

export const issueServerTokenBody = z
  .object({
    action: actionSchema,
    ttl: clampedIntField(1, SERVER_TOKEN_LIMITS.ttlMax, SERVER_TOKEN_LIMITS.ttlDefault),
    max_uses: intField(1, SERVER_TOKEN_LIMITS.maxUsesMax, SERVER_TOKEN_LIMITS.maxUsesDefault),
    bind_ip: ipField.optional(),
    /** Alias used by the origin service's public SDKs. */
    binding_ip: ipField.optional(),
    bind_device_id: textField(128).optional(),
    bind_fingerprint: textField(256).optional(),
    bind_uid: textField(128).optional(),
  })
  .refine((b) => !(b.bind_ip && b.binding_ip && b.bind_ip !== b.binding_ip), {
    message: 'bind_ip and binding_ip disagree',
    path: ['bind_ip'],
  });
export type IssueServerToken = z.infer<typeof issueServerTokenBody>;

/** The answer's `data`, as the document declares it (answers.ts). */
export type IssuedServerToken = z.output<typeof serverTokenAnswer>;

/** Issues an `sct_` token: the row holds its bindings and use count, the token only its id and expiry. */
export async function issueServerToken(
  db: Database,
  keys: TokenKeys,
  app: Pick<App, 'id'>,
  input: IssueServerToken,
): Promise<IssuedServerToken> {
  const id = randomId(16);
  const issuedAt = Math.floor(Date.now() / 1000);
  const expiresAt = issuedAt + input.ttl;
  await db.insert(regional(db, serverTokens)).values({
    id,
    appId: app.id,
    action: input.action,
    maxUses: input.max_uses,
    bindIp: input.bind_ip ?? input.binding_ip ?? null,
    bindDeviceId: input.bind_device_id ?? null,
    bindFingerprint: input.bind_fingerprint ?? null,
    bindUid: input.bind_uid ?? null,
    issuedAt: new Date(issuedAt * 1000),
    expiresAt: new Date(expiresAt * 1000),
  });
  return {
    server_token: keys.sealServer({ id, app: app.id, exp: expiresAt }),
    expires_in: input.ttl,
    issued_at: issuedAt,
  };
}

export interface ServerTokenPresentation {
  action: string;
  ip: string;
  deviceId?: string | undefined;
  fingerprint?: string | undefined;
}

/** A server token that passed every check of `checkServerToken`; its use is not counted yet. */
export interface CheckedServerToken {
  id: string;
  uid: string | null;
}

/**
 * Accepts a server token at challenge initialization, 1. to 4. of `useServerToken`, reading only: the use
 * is spent later by `spendServerTokenUse`, once the request is known to be served (not rate limited, not
 * rejected, not degraded).
 */
export async function checkServerToken(
  db: Database,
  keys: TokenKeys,
  app: Pick<App, 'id'>,
  token: string,
  seen: ServerTokenPresentation,
): Promise<CheckedServerToken> {
  const payload = keys.openServer(token);
  if (!payload || payload.app !== app.id) throw new GatehouseError('server_token_invalid');
  if (payload.exp * 1000 <= Date.now()) throw new GatehouseError('server_token_expired');
  const [row] = await db.select().from(serverTokens).where(eq(serverTokens.id, payload.id)).limit(1);
  if (!row || row.appId !== app.id) throw new GatehouseError('server_token_invalid');
  if (row.action !== seen.action) throw new GatehouseError('server_token_action_mismatch');
  if (row.bindIp && row.bindIp !== normalizeIp(seen.ip)) {
    throw new GatehouseError(
      'server_token_binding_mismatch',
      'The request IP does not match the server token.',
    );
  }
  if (row.bindDeviceId && row.bindDeviceId !== seen.deviceId) {
    throw new GatehouseError(
      'server_token_binding_mismatch',
      'The device id does not match the server token.',
    );
  }
  if (row.bindFingerprint && row.bindFingerprint !== seen.fingerprint) {
    throw new GatehouseError(
      'server_token_binding_mismatch',
      'The fingerprint does not match the server token.',
    );
  }
  if (row.uses >= row.maxUses) throw new GatehouseError('server_token_exhausted');
  return { id: row.id, uid: row.bindUid };
}

/** Counts one use atomically (a conditional UPDATE, so concurrent inits never exceed max_uses). */
export async function spendServerTokenUse(db: Database, checked: CheckedServerToken): Promise<void> {
  const [used] = await db
    .update(serverTokens)
    .set({ uses: sql`${serverTokens.uses} + 1` })
    .where(
      and(
        eq(serverTokens.id, checked.id),
        lt(serverTokens.uses, serverTokens.maxUses),
        gt(serverTokens.expiresAt, sql`now()`),
      ),
    )
    .returning({ uses: serverTokens.uses });
  if (!used) throw new GatehouseError('server_token_exhausted');
}

/**
 * Accepts a server token and spends one use: 1. MAC and app (nothing read for a forgery), 2. expiry,
 * 3. the row exists, 4. action and bindings match the request, 5. one use counted atomically.
 * Returns the bound uid, if any.
 */
export async function useServerToken(
  db: Database,
  keys: TokenKeys,
  app: Pick<App, 'id'>,
  token: string,
  seen: ServerTokenPresentation,
): Promise<{ uid: string | null }> {
  const checked = await checkServerToken(db, keys, app, token, seen);
  await spendServerTokenUse(db, checked);
  return { uid: checked.uid };
}

import { randomId } from '@gatehouse/core/crypto';
import { type Database, regional } from '@gatehouse/core/db';
import { type App, passTokens } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { applyClientIpPolicy, type IpComparison } from '@gatehouse/core/ip';
import type { CaptchaArgs, TokenKeys } from '@gatehouse/core/tokens';
import { eq, sql } from 'drizzle-orm';
import { passTokenClaims } from './pass-token-claims.ts';

export interface MintPassToken {
  app: Pick<App, 'id' | 'passTokenTtl'>;
  challengeId: string;
  action: string;
  uid?: string | null;
  /** Turnstile's `cdata`, given at render; only siteverify echoes it. */
  cdata?: string | null;
  captchaArgs: CaptchaArgs;
}

/** A pass token's row and its sealed `pt_` token; the row is not written yet. */
export interface PassTokenDraft {
  row: typeof passTokens.$inferInsert & { issuedAt: Date; expiresAt: Date };
  token: string;
}

/**
 * A pass token made but not recorded: for the submit, which writes the row in the same statement that takes
 * its challenge's attempt slot (api/src/challenges/attempts.ts). The token means nothing until its row exists.
 */
export function draftPassToken(keys: TokenKeys, input: MintPassToken): PassTokenDraft {
  const id = randomId(16);
  const issuedAt = new Date();
  const expiresAt = new Date(issuedAt.getTime() + input.app.passTokenTtl * 1000);
  const row = {
    id,
    appId: input.app.id,
    challengeId: input.challengeId,
    action: input.action,
    uid: input.uid ?? null,
    cdata: input.cdata ?? null,
    captchaArgs: input.captchaArgs,
    issuedAt,
    expiresAt,
  };
  return {
    row,
    token: keys.sealPass({ id, app: input.app.id, exp: Math.floor(expiresAt.getTime() / 1000) }),
  };
}

/** Records a solved challenge and returns its single-use `pt_` token. */
export async function mintPassToken(db: Database, keys: TokenKeys, input: MintPassToken): Promise<string> {
  const { row, token } = draftPassToken(keys, input);
  await db.insert(regional(db, passTokens)).values(row);
  return token;
}

export interface PassVerdict {
  valid: boolean;
  challenge_id: string;
  action: string;
  uid: string | null;
  captcha_args: CaptchaArgs;
  /** How `client_ip` compared with the solve-time IP; absent when no client_ip was sent. */
  client_ip_check?: IpComparison;
  /** Only with `withCdata` (siteverify): the page's Turnstile `cdata`. */
  cdata?: string | null;
}

/** How long after consumption a retry with the same idempotency key gets the same verdict. */
export const IDEMPOTENCY_WINDOW_MS = 60_000;

export interface ValidateOptions {
  clientIp?: string | undefined;
  idempotencyKey?: string | undefined;
  /** Verify without consuming (drop-in compatibility with the origin service's SDKs). */
  keepToken?: boolean | undefined;
  /**
   * Recognise a same-key retry for the token's whole lifetime rather than IDEMPOTENCY_WINDOW_MS after
   * consumption: Turnstile's documented `idempotency_key` semantics, for its siteverify endpoint.
   */
  retryForLifetime?: boolean | undefined;
  /** Add the row's `cdata` to the verdict (siteverify; `/v1/validate` answers the spec's fields only). */
  withCdata?: boolean | undefined;
}

/**
 * Validates a `pt_` token for `app`: 1. MAC and shape (no database touched for a forgery), 2. the token
 * belongs to this app, 3. lifetime, 4. a replay of a token this process claimed is answered from its memory
 * of them (pass-token-claims.ts, ClaimMemory: no database round trip; a same-key retry still goes on, for
 * the original verdict), 5. atomic consumption in one statement (a conditional UPDATE: of any number of
 * concurrent validations, across processes, exactly one wins; the row read back in the same round trip, so
 * a replay of a token claimed elsewhere costs what a fresh validation does), 6. idempotent retries, 7. the
 * client IP policy (a mismatch under `reject` throws the `client_ip_mismatch` verdict; the token is spent
 * all the same). Step 5 goes through the database's claim batcher (pass-token-claims.ts): one statement for
 * the validations of an event-loop turn.
 */
export async function validatePassToken(
  db: Database,
  keys: TokenKeys,
  app: Pick<App, 'id' | 'clientIpPolicy'>,
  token: string,
  options: ValidateOptions = {},
): Promise<PassVerdict> {
  const payload = keys.openPass(token);
  if (!payload || payload.app !== app.id) throw new GatehouseError('token_not_found');
  if (payload.exp * 1000 <= Date.now()) throw new GatehouseError('token_expired');

  const claims = passTokenClaims(db);
  // Claimed by this process: spent. Only a retry with the claim's own key needs the row (its verdict).
  const claimedHere = claims.memory.recall(payload.id);
  const retry = options.idempotencyKey !== undefined && claimedHere?.key === options.idempotencyKey;
  if (claimedHere && (options.keepToken || !retry)) {
    throw new GatehouseError('token_already_used');
  }

  let row: typeof passTokens.$inferSelect | undefined;
  if (options.keepToken) {
    [row] = await db.select().from(passTokens).where(eq(passTokens.id, payload.id)).limit(1);
    if (!row || row.appId !== app.id) throw new GatehouseError('token_not_found');
    if (row.consumedAt) throw new GatehouseError('token_already_used');
  } else {
    const key = options.idempotencyKey ?? null;
    const found = await claims.claim(payload.id, app.id, key);
    if (!found || found.appId !== app.id) throw new GatehouseError('token_not_found');
    row = found;
    if (found.fresh) claims.memory.remember(payload.id, payload.exp, key);
    else {
      // A retry is recognised only shortly after the first answer: a caller reusing one fixed key must not
      // turn every later replay into a valid verdict.
      const sameRetry =
        options.idempotencyKey !== undefined &&
        found.idempotencyKey === options.idempotencyKey &&
        found.consumedAt !== null &&
        // The token's expiry was checked above, so "for its lifetime" needs no other bound.
        (options.retryForLifetime === true ||
          Date.now() - found.consumedAt.getTime() < IDEMPOTENCY_WINDOW_MS);
      if (!sameRetry) throw new GatehouseError('token_already_used');
    }
  }

  const captchaArgs = row.captchaArgs as CaptchaArgs;
  const verdict: PassVerdict = {
    valid: true,
    challenge_id: row.challengeId,
    action: row.action,
    uid: row.uid,
    captcha_args: captchaArgs,
    ...(options.withCdata ? { cdata: row.cdata } : {}),
  };
  return applyClientIpPolicy(verdict, captchaArgs.user_ip, options.clientIp, app.clientIpPolicy);
}

/** Deletes tokens that expired more than `graceSeconds` ago; run periodically. */
export async function purgeExpiredPassTokens(db: Database, graceSeconds = 3600): Promise<void> {
  await db
    .delete(passTokens)
    .where(sql`${passTokens.expiresAt} < now() - make_interval(secs => ${graceSeconds})`);
}

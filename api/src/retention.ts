import type { Database } from '@gatehouse/core/db';
import { serverTokens } from '@gatehouse/core/db/schema';
import { sql } from 'drizzle-orm';
import { purgeExpiredAttempts } from './challenges/attempts.ts';
import { purgeExpiredPassTokens } from './tokens/pass-tokens.ts';

/**
 * Rows that only mattered until their expiry: pass tokens, server tokens and challenge attempts, each kept
 * an hour past it (a late retry still gets `token_expired`, not `token_not_found`). Run every minute.
 */
export async function purgeExpired(db: Database): Promise<void> {
  await purgeExpiredPassTokens(db);
  await purgeExpiredAttempts(db);
  await db.delete(serverTokens).where(sql`${serverTokens.expiresAt} < now() - interval '1 hour'`);
}

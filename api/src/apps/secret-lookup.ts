import type { Database } from '@gatehouse/core/db';
import { type App, apps } from '@gatehouse/core/db/schema';
import { eq, or } from 'drizzle-orm';
import { hashSecret, verifyAppSecret } from './secrets.ts';

/**
 * Finds the app a secret belongs to, from the secret alone (the siteverify-compatible endpoints get no app
 * key): 1. SHA-256 of the secret, 2. an indexed look-up of that hash among current and previous secrets
 * (the index compares hashes of a 256-bit random value, so its timing says nothing usable about a secret),
 * 3. the secret confirmed in constant time with the rotation grace rule of `/v1/validate`.
 */
export async function findAppBySecret(db: Database, secret: string): Promise<App | null> {
  if (secret.length === 0 || secret.length > 256) return null;
  const hash = hashSecret(secret);
  const rows = await db
    .select()
    .from(apps)
    .where(or(eq(apps.secretHash, hash), eq(apps.previousSecretHash, hash)))
    .limit(2);
  return rows.find((app) => verifyAppSecret(app, secret)) ?? null;
}

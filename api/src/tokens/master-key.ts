import { randomBytes } from 'node:crypto';
import type { Database } from '@gatehouse/core/db';
import { settings } from '@gatehouse/core/db/schema';
import { TokenKeys } from '@gatehouse/core/tokens';
import { eq } from 'drizzle-orm';

const SETTING = 'token_master_key';

/**
 * The key every token MAC derives from. Configured explicitly (GATEHOUSE_TOKEN_KEY) or generated once and
 * stored in the database, so every instance on one database agrees without any set-up. The first writer
 * wins; the others read its value.
 */
export async function loadTokenKeys(db: Database, configured?: Buffer): Promise<TokenKeys> {
  if (configured) return new TokenKeys(configured);
  await db
    .insert(settings)
    .values({ key: SETTING, value: randomBytes(32).toString('base64') })
    .onConflictDoNothing();
  const [row] = await db.select().from(settings).where(eq(settings.key, SETTING));
  return new TokenKeys(Buffer.from(row!.value, 'base64'));
}

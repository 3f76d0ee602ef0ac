import { success } from '@gatehouse/core/errors';
import { parseOrThrow, readBody } from '@gatehouse/core/http';
import { regionSyncCredential, STANDBY_REGION } from '@gatehouse/core/standby-keys';
import { STANDBY_KID } from '@gatehouse/core/tokens';
import type Router from '@koa/router';
import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { requireAdmin } from './admin.ts';

export const rotateStandbyKeyBody = z
  .object({ region: z.string().regex(STANDBY_REGION, 'region must be 1 to 32 characters of a-z, 0-9 or -') })
  .strict();
export const standbyKidParam = z.string().regex(STANDBY_KID, 'not a standby key id');

/**
 * The standby keyring for administrators (docs/failover.md, "Standby keys"): list, rotate a region's key
 * (the old one verifies what it minted, then nothing), revoke one key at once (its tokens are refused by
 * every checker from the next request; a revoked active key is replaced). Never shows key material.
 */
export function standbyKeyRoutes(router: Router, deps: Deps): void {
  const guard = requireAdmin(deps.adminToken, deps.consoleSessions);
  router.get('/admin/v1/standby-keys', guard, async function listStandbyKeys(ctx) {
    ctx.body = success({ keys: await deps.standbyKeys.list() });
  });
  router.post('/admin/v1/standby-keys/rotate', guard, async function rotateStandbyKey(ctx) {
    const { region } = readBody(ctx, rotateStandbyKeyBody);
    const key = await deps.standbyKeys.rotate(region);
    deps.logger.warn({ kid: key.kid, region }, 'standby key rotated');
    ctx.body = success(key);
  });
  // The sync credential for one region's standby (derived from STANDBY_SYNC_TOKEN): it reads that
  // region's snapshot only. A secret: shown to the admin token alone, never logged.
  router.post('/admin/v1/standby-keys/sync-credential', guard, async function regionCredential(ctx) {
    const { region } = readBody(ctx, rotateStandbyKeyBody);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = success({ region, sync_token: regionSyncCredential(deps.syncToken, region) });
  });
  router.post('/admin/v1/standby-keys/:kid/revoke', guard, async function revokeStandbyKey(ctx) {
    const { kid } = parseOrThrow(z.object({ kid: standbyKidParam }), { kid: ctx.params.kid });
    const key = await deps.standbyKeys.revoke(kid);
    deps.logger.warn({ kid, region: key.region }, 'standby key revoked');
    ctx.body = success(key);
  });
}

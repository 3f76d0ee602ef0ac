import { success } from '@gatehouse/core/errors';
import { regionSyncCredential, STANDBY_REGION } from '@gatehouse/core/standby-keys';
import { STANDBY_KID } from '@gatehouse/core/tokens';
import { z } from 'zod';
import { adminAuth, bodyErrors, errors, ok, standbyKeyView } from '../answers.ts';
import { type Route, route } from '../route-table.ts';
import { adminGuard } from './admin.ts';

export const rotateStandbyKeyBody = z
  .object({ region: z.string().regex(STANDBY_REGION, 'region must be 1 to 32 characters of a-z, 0-9 or -') })
  .strict();
export const standbyKidParam = z.string().regex(STANDBY_KID, 'not a standby key id');

/**
 * The standby keyring for administrators (docs/failover.md, "Standby keys"): list, rotate a region's key
 * (the old one verifies what it minted, then nothing), revoke one key at once (its tokens are refused by
 * every checker from the next request; a revoked active key is replaced). Never shows key material.
 */
export const standbyKeyRoutes: Route[] = [
  route({
    method: 'get',
    path: '/admin/v1/standby-keys',
    doc: () => ({
      summary:
        'The standby keyring: one offline_ signing key per region, with its state (never the key itself)',
      security: adminAuth,
      responses: {
        '200': {
          description: 'Keys',
          json: ok(z.strictObject({ keys: z.array(standbyKeyView) })),
        },
        ...errors('unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    use: adminGuard,
    handler: ({ deps }) =>
      async function listStandbyKeys() {
        return success({ keys: await deps.standbyKeys.list() });
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/standby-keys/rotate',
    doc: () => ({
      summary: 'New active key for a region; the previous one only verifies the tokens it minted before',
      security: adminAuth,
      responses: {
        '200': { description: 'The new key', json: ok(standbyKeyView) },
        ...errors(...bodyErrors, 'unauthorized', 'database_unavailable', 'rate_limited'),
      },
    }),
    body: rotateStandbyKeyBody,
    use: adminGuard,
    handler: ({ deps }) =>
      async function rotateStandbyKey(_ctx, { body: { region } }) {
        const key = await deps.standbyKeys.rotate(region);
        deps.logger.warn({ kid: key.kid, region }, 'standby key rotated');
        return success(key);
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/standby-keys/sync-credential',
    doc: () => ({
      summary:
        "The sync credential for one region's standby: it reads that region's snapshot only (derived from STANDBY_SYNC_TOKEN)",
      security: adminAuth,
      responses: {
        '200': {
          description: 'The credential (a secret)',
          json: ok(z.strictObject({ region: z.string(), sync_token: z.string().regex(/^sr_/) })),
        },
        ...errors(...bodyErrors, 'unauthorized'),
      },
    }),
    body: rotateStandbyKeyBody,
    use: adminGuard,
    // A secret: shown to the admin token alone, never logged.
    handler: ({ deps }) =>
      function regionCredential(ctx, { body: { region } }) {
        ctx.set('Cache-Control', 'no-store');
        return success({ region, sync_token: regionSyncCredential(deps.syncToken, region) });
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/standby-keys/{kid}/revoke',
    doc: () => ({
      summary:
        'Revoke a key: every checker refuses its tokens from the next request on; an active key is replaced',
      security: adminAuth,
      responses: {
        '200': { description: 'The revoked key', json: ok(standbyKeyView) },
        ...errors(
          'invalid_request',
          'unauthorized',
          'not_found',
          'service_unavailable',
          'database_unavailable',
        ),
      },
    }),
    params: { kid: standbyKidParam },
    use: adminGuard,
    handler: ({ deps }) =>
      async function revokeStandbyKey(_ctx, { params: { kid } }) {
        const key = await deps.standbyKeys.revoke(kid);
        deps.logger.warn({ kid, region: key.region }, 'standby key revoked');
        return success(key);
      },
  }),
];

import { constantTimeEqual, sha256Hex } from '@gatehouse/core/crypto';
import type { App } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { DEFAULT_REGION, regionSyncCredential, STANDBY_REGION } from '@gatehouse/core/standby-keys';
import { type StandbySnapshot, snapshotSchema } from '@gatehouse/core/standby-snapshot';
import { z } from 'zod';
import { errors, ok, syncAuth } from '../answers.ts';
import { resolvePolicy } from '../risk/policy.ts';
import { type Route, route } from '../route-table.ts';

const snapshotQuery = z.object({
  region: z
    .string()
    .regex(STANDBY_REGION, 'region must be 1 to 32 characters of a-z, 0-9 or -')
    .default(DEFAULT_REGION),
});

/**
 * Standby support on the main API: public discovery of the standby hosts (SDKs and the widget learn them
 * here, integrations never configure them), and the snapshot the standby refreshes while the main API is up.
 */
export const standbyRoutes: Route[] = [
  route({
    method: 'get',
    path: '/v1/standby',
    doc: () => ({
      summary: 'Where the standby hosts are (SDKs and the widget fail over to them on their own)',
      responses: {
        '200': {
          description: 'Standby URLs',
          json: ok(z.strictObject({ bypass: z.array(z.string()), fallback: z.array(z.string()) })),
        },
      },
    }),
    handler: ({ deps }) =>
      function standbyHosts(ctx) {
        ctx.set('Access-Control-Allow-Origin', '*');
        ctx.set('Cache-Control', 'public, max-age=300');
        return success({
          bypass: deps.config.standby.bypassUrls,
          fallback: deps.config.standby.fallbackUrls,
        });
      },
  }),
  route({
    method: 'get',
    path: '/internal/v1/standby/snapshot',
    doc: () => ({
      summary:
        "The snapshot a region's standby keeps (apps, secret hashes, the region's signing keys); the standby sync credential only, never the admin token",
      security: syncAuth,
      responses: {
        '200': { description: 'The snapshot', json: ok(snapshotSchema) },
        ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable', 'rate_limited'),
      },
    }),
    query: snapshotQuery,
    handler: ({ deps }) =>
      async function snapshot(ctx, { query: { region } }) {
        const header = ctx.get('Authorization');
        const presented = sha256Hex(header.startsWith('Bearer ') ? header.slice(7) : '');
        const anyRegion = constantTimeEqual(presented, sha256Hex(deps.syncToken));
        const thisRegion = constantTimeEqual(
          presented,
          sha256Hex(regionSyncCredential(deps.syncToken, region)),
        );
        if (header.length <= 7 || !(anyRegion || thisRegion)) {
          throw new GatehouseError('unauthorized', 'Missing or invalid standby sync token.');
        }
        // A region's first key is created only for the regions this instance declares: a credential holder
        // naming new regions would otherwise create a signing key per name.
        const keys = await deps.standbyKeys.forRegion(region, deps.config.standby.regions.includes(region));
        if (!keys) {
          throw new GatehouseError(
            'not_found',
            `Region "${region}" is not served here: set GATEHOUSE_REGION or STANDBY_REGIONS on this instance, or create its key (POST /admin/v1/standby-keys/rotate).`,
          );
        }
        const apps = await deps.apps.list();
        const body: StandbySnapshot = {
          generated_at: new Date().toISOString(),
          region,
          offline_keys: keys,
          apps: apps.map((app) => ({
            id: app.id,
            app_key: app.appKey,
            secret_hash: app.secretHash,
            previous_secret_hash: app.previousSecretHash,
            previous_secret_expires_at: app.previousSecretExpiresAt?.toISOString() ?? null,
            ...previousKey(app),
            disabled: app.disabledAt !== null,
            test_mode: app.testMode,
            client_ip_policy: app.clientIpPolicy,
            allowed_domains: app.allowedDomains,
            image_kinds: [...resolvePolicy(app.riskPolicy).image_kinds],
          })),
        };
        ctx.set('Cache-Control', 'no-store');
        return success(body);
      },
  }),
];

/** The key replaced by the last rotation, only while it still names the app. */
function previousKey(app: App): {
  previous_app_key: string | null;
  previous_app_key_expires_at: string | null;
} {
  const until = app.previousAppKeyExpiresAt;
  if (!app.previousAppKey || !until || until <= new Date()) {
    return { previous_app_key: null, previous_app_key_expires_at: null };
  }
  return { previous_app_key: app.previousAppKey, previous_app_key_expires_at: until.toISOString() };
}

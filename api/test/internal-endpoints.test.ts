import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiServer } from '../src/server.ts';
import { databaseAvailable, startRealApiServer, TEST_DATABASE } from './harness.ts';

/*
 * With the Ingress sending `/` to the API pods, /metrics and the standby's snapshot (offline signing key,
 * secret hashes) must not be public. With INTERNAL_PORT they are served only on that port (which no Ingress
 * routes and NetworkPolicies guard), and /metrics asks for METRICS_TOKEN.
 */
const run = await databaseAvailable();
const METRICS_TOKEN = 'mt_internal-endpoints-test-token';

describe.runIf(run)(`internal endpoints on their own port (${TEST_DATABASE})`, () => {
  let api: ApiServer;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ api, close } = await startRealApiServer({
      INTERNAL_PORT: '0',
      METRICS_TOKEN,
      GATEHOUSE_ADMIN_TOKEN: 'at_internal-endpoints-test-admin-token',
    }));
  }, 60_000);
  afterAll(async () => {
    await close?.();
  });

  it('the public port answers 404 for /metrics and /internal/*, as for a path that does not exist', async () => {
    for (const path of ['/metrics', '/internal/v1/standby/snapshot', '/internal/anything']) {
      const res = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe('not_found');
    }
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  });

  it('the internal port serves them; /metrics asks for its own token', async () => {
    expect(api.internalUrl).toBeDefined();
    expect((await fetch(`${api.internalUrl}/metrics`)).status).toBe(401);
    expect(
      (
        await fetch(`${api.internalUrl}/metrics`, {
          headers: { Authorization: 'Bearer wrong-token-xxxxxxxx' },
        })
      ).status,
    ).toBe(401);
    const ok = await fetch(`${api.internalUrl}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/^# HELP /m);
    // The snapshot is there (behind the sync credential), not a 404.
    expect((await fetch(`${api.internalUrl}/internal/v1/standby/snapshot`)).status).toBe(401);
  });
});

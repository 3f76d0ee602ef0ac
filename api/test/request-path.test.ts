import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiServer } from '../src/server.ts';
import { databaseAvailable, startRealApiServer, TEST_DATABASE } from './harness.ts';

/*
 * A path with repeated slashes (`//admin/v1/apps`) is the same route as its collapsed form (tolerant-paths.ts),
 * so every middleware that decides by path must see the collapsed one: the failed-authentication throttle
 * (admin brute force) and the internal-endpoints guard (/metrics on the public port). Both read the raw
 * path before the collapse did, so `//` walked past them to the route itself.
 */
const run = await databaseAvailable();
const ADMIN_TOKEN = 'at_request-path-test-admin-token';
const METRICS_TOKEN = 'mt_request-path-test-metrics-token';

describe.runIf(run)(`paths with repeated slashes (${TEST_DATABASE})`, () => {
  let api: ApiServer;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ api, close } = await startRealApiServer({
      INTERNAL_PORT: '0',
      METRICS_TOKEN,
      GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
      TRUSTED_PROXIES: 'loopback',
      AUTH_FAILURE_WINDOW_SECONDS: '60',
      AUTH_FAILURES_PER_SOURCE_AND_KEY: '3',
      AUTH_FAILURES_PER_SOURCE: '30',
      AUTH_FAILURES_PER_KEY: '100',
    }));
  }, 60_000);
  afterAll(async () => {
    await close?.();
  });

  it('the public port answers 404 for //metrics and //internal/* as for /metrics', async () => {
    for (const path of ['//metrics', '///metrics', '//internal/v1/standby/snapshot']) {
      const res = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: string }).error, path).toBe('not_found');
    }
  });

  it('wrong admin tokens sent to //admin/... are throttled like those sent to /admin/...', async () => {
    const from = { 'X-Forwarded-For': '203.0.113.90' };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${api.url}//admin/v1/apps`, {
        headers: { Authorization: 'Bearer at_wrong-admin-token-xxxxxxxxxxxx', ...from },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // The right token from that address is refused too while the window lasts, through either path.
    const right = await fetch(`${api.url}/admin/v1/apps`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...from },
    });
    expect(right.status).toBe(429);
    const elsewhere = await fetch(`${api.url}//admin/v1/apps`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'X-Forwarded-For': '198.51.100.91' },
    });
    expect(elsewhere.status).toBe(200);
  });
});

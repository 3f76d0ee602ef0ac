import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * A flood of image inits beyond what the workers draw: past IMAGE_POOL_WAITING waiting requests, an init is
 * shed with 503 `service_unavailable` and Retry-After, in the envelope and as the OpenAPI document says (a
 * 503 is not only `database_unavailable`), and the service keeps answering.
 */
const run = await databaseAvailable();
const SLIDE = { invisible_below: 0, image_below: 101, image_kinds: ['slide'] };

describe.runIf(run)('image inits beyond the pool are shed, as documented', () => {
  let api: TestApi;
  const saved = { ...process.env };
  beforeAll(async () => {
    // One ready per kind and one request allowed to wait: the rest of a burst is shed at once.
    Object.assign(process.env, { IMAGE_POOL_SIZE: '1', IMAGE_POOL_WAITING: '1' });
    api = await startTestApi({ TRUSTED_PROXIES: 'loopback' });
  });
  afterAll(async () => {
    process.env = saved;
    await api?.close();
  });

  it('a burst of 120 slide inits: some served, the rest 503 service_unavailable with Retry-After, then served again', async () => {
    const a = await api.createApp({ name: 'image-shed', risk_policy: SLIDE });
    const init = (i: number) =>
      api.post(
        '/v1/challenge/init',
        { app_key: a.appKey, action: 'login', signals },
        { ...CHROME, 'X-Forwarded-For': `10.77.${i >> 8}.${i & 255}` },
      );
    // The worker thread starts with the first image init: wait until it has drawn, so the burst meets a
    // running pool rather than one still loading its canvas library.
    await expect.poll(async () => (await init(3000)).status, { timeout: 30_000, interval: 250 }).toBe(200);
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => init(i)));
    const shed = answers.filter((r) => r.status === 503);
    const served = answers.filter((r) => r.status === 200);
    expect(served.length, 'served').toBeGreaterThan(0);
    expect(shed.length, 'shed').toBeGreaterThan(0);
    expect(answers.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    for (const r of answers) expectMatchesOpenApi('/v1/challenge/init', 'post', r);
    for (const r of shed) {
      expect(r.body).toMatchObject({ code: -1, error: 'service_unavailable' });
      expect(r.headers?.get('retry-after')).toBe('1');
    }
    // Once the workers caught up, a new init is served.
    await expect.poll(async () => (await init(4000)).status, { timeout: 30_000, interval: 250 }).toBe(200);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzEndpoints } from './fuzz-requests.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

describe.runIf(run)('challenge endpoints under random input', () => {
  let api: TestApi;
  let appKey: string;
  beforeAll(async () => {
    api = await startTestApi();
    // Generous per-IP limits: the fuzzer sends hundreds of inits from one address.
    ({ appKey } = await api.createApp({
      name: 'fuzz',
      test_mode: true,
      risk_policy: { rate_limit: { ip_per_minute: 100_000, high_risk_ip_per_minute: 100_000 } },
    }));
  });
  afterAll(() => api?.close());

  it('never answers 5xx, always an envelope, and keeps serving', async () => {
    const requests = await fuzzEndpoints({
      baseUrl: api.url,
      paths: ['/v1/challenge/init', '/v1/challenge/submit'],
      fields: [
        'app_key',
        'action',
        'server_token',
        'platform',
        'referer',
        'signals',
        'challenge_id',
        'challenge',
        'pow',
        'answer',
      ],
      interesting: [appKey, 'login', 'sct_a.b', 'ch_x', 'web', 'https://shop.test/'],
    });
    expect(requests).toBeGreaterThanOrEqual(300);
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
  }, 180_000);
});

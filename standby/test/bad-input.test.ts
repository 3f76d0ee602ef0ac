import { describe, expect, it } from 'vitest';
import { fuzzEndpoints } from '../../api/test/fuzz-requests.ts';
import { standbyWithApi } from './harness.ts';

describe('standby endpoints under random input', () => {
  const s = standbyWithApi('fuzz');

  for (const serving of [true, false]) {
    it(`never answers 5xx (but service_online while online), always an envelope: serving=${serving}`, async () => {
      s.standby.health.setMode(serving ? 'serve' : 'online');
      for (const [role, paths] of [
        ['bypass', ['/v1/challenge/init', '/v1/challenge/submit', '/internal/v1/mode']],
        ['fallback', ['/api/validate', '/internal/v1/mode']],
      ] as const) {
        const requests = await fuzzEndpoints({
          baseUrl: s.standby.urls[role]!,
          paths: [...paths],
          fields: [
            'app_key',
            'action',
            'platform',
            'challenge_id',
            'challenge',
            'pow',
            'answer',
            'pass_token',
            'client_ip',
            'idempotency_key',
            'mode',
          ],
          interesting: [s.appKey, 'login', 'offline_a.b', 'pt_a.b', 'ch_x', 'serve', '203.0.113.9'],
          headers: () => s.auth,
          allowed5xx: serving ? [] : [503],
          numRuns: 150,
        });
        expect(requests).toBeGreaterThanOrEqual(150);
      }
      expect((await fetch(`${s.standby.urls.fallback}/healthz`)).status).toBe(200);
    }, 180_000);
  }
});

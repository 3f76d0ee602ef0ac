import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBase64Url } from '../../core/src/pow/encoding.ts';
import type { AppSettingsInput } from '../src/apps/settings.ts';
import {
  DESKTOP_CHROME as BROWSER,
  DESKTOP_SIGNALS,
  databaseAvailable,
  startTestApi,
  type TestApi,
} from './harness.ts';

const run = await databaseAvailable();

/** Nonces 1..count as a client that hashes nothing sends them, bare or with made-up hash prefixes. */
function junk(puzzle: Puzzle, withPrefixes: boolean): object {
  const nonces = Array.from({ length: puzzle.count }, (_, i) => i + 1);
  if (!withPrefixes) return { nonces };
  return { nonces, hashes: nonces.map(() => toBase64Url(new Uint8Array(8))) };
}

describe.runIf(run)('no pass without the work, over HTTP', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function started(settings: Partial<AppSettingsInput>) {
    const app = await api.createApp({ name: 'no-work', ...settings });
    const init = await api.post(
      '/v1/challenge/init',
      { app_key: app.appKey, action: 'login', signals: DESKTOP_SIGNALS },
      BROWSER,
    );
    expect(init.status).toBe(200);
    return { app, data: init.body.data };
  }

  it('a test-mode app (every nonce meets its target) still wants the one hash: junk is refused, the work passes', async () => {
    for (const withPrefixes of [false, true]) {
      const { app, data } = await started({ test_mode: true });
      const body = { app_key: app.appKey, challenge_id: data.challenge_id, challenge: data.challenge };
      const cheat = await api.post('/v1/challenge/submit', { ...body, pow: junk(data.pow, withPrefixes) });
      expect(cheat.status).toBe(422);
      expect(cheat.body.error).toBe('invalid_answer');
    }
    const { app, data } = await started({ test_mode: true });
    const solved = await api.post('/v1/challenge/submit', {
      app_key: app.appKey,
      challenge_id: data.challenge_id,
      challenge: data.challenge,
      pow: await solvePuzzle(data.pow),
    });
    expect(solved.status).toBe(200);
    expect(solved.body.data.pass_token).toMatch(/^pt_/);
  });

  it('the default invisible tier: nonces 1..count with made-up prefixes never earn a pass token', async () => {
    const SUBMITS = 40;
    let passed = 0;
    for (let i = 0; i < SUBMITS; i++) {
      const { app, data } = await started({ risk_policy: { invisible_below: 101, image_below: 101 } });
      expect(data.tier).toBe('invisible');
      const res = await api.post('/v1/challenge/submit', {
        app_key: app.appKey,
        challenge_id: data.challenge_id,
        challenge: data.challenge,
        pow: junk(data.pow, i % 2 === 0),
      });
      if (res.status === 200) passed++;
      else expect(res.body.error).toBe('invalid_answer');
    }
    expect(passed).toBe(0);
  });
});

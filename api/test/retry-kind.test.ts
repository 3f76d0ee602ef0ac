import { seededRandom } from '@gatehouse/core/challenges';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { humanDrag } from '../../core/src/challenges/test-trajectories.ts';
import { openChallenge } from '../src/challenges/sealed-challenge.ts';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';

/*
 * After a wrong answer the person tries the same kind of task again, over real HTTP: an app serving all
 * three kinds, each client (its own address, forwarded by an ingress) answers its picture wrongly, and its
 * next picture is of the same kind; after a pass the kind is drawn at random again.
 */
const run = await databaseAvailable();

const POLICY = { invisible_below: 0, image_below: 101, image_kinds: ['slide', 'click', 'select'] };

describe.runIf(run)('the next picture after a wrong answer', () => {
  let api: TestApi;
  let app: { appKey: string; appId: string };
  const saved = { ...process.env };
  beforeAll(async () => {
    // Drawn inline (read from the process's environment): a pool sheds inits faster than it draws.
    process.env.IMAGE_POOL_SIZE = '0';
    api = await startTestApi({ TRUSTED_PROXIES: 'loopback' });
    app = await api.createApp({ name: 'retry-kind', risk_policy: POLICY });
  });
  afterAll(async () => {
    process.env = saved;
    await api?.close();
  });

  const init = async (ip: string) => {
    const res = await api.post(
      '/v1/challenge/init',
      { app_key: app.appKey, action: 'login', signals },
      { ...CHROME, 'X-Forwarded-For': ip },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { challenge_id: string; challenge: string; image: { kind: string } };
  };
  const submit = (ip: string, data: { challenge_id: string; challenge: string }, answer: unknown) =>
    api.post(
      '/v1/challenge/submit',
      { app_key: app.appKey, challenge_id: data.challenge_id, challenge: data.challenge, answer },
      { 'X-Forwarded-For': ip },
    );

  it('is of the kind answered wrongly, for every kind; a pass lets the kind vary again', async () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < 9; i++) {
      const ip = `10.77.${i}.1`;
      const first = await init(ip);
      // A wrong answer of any kind: an empty one.
      expect((await submit(ip, first, [])).status).toBe(422);
      const next = await init(ip);
      expect(next.image.kind, `client ${i}`).toBe(first.image.kind);
      seen.set(first.image.kind, (seen.get(first.image.kind) ?? 0) + 1);
    }
    // Nine clients' first pictures at random: all of one kind has probability 3 * 3^-9.
    expect(seen.size).toBeGreaterThan(1);

    // A client that misses a slide, then passes the slide it gets again: its next pictures are random.
    let n = 0;
    let ip = '';
    let data: Awaited<ReturnType<typeof init>>;
    do {
      ip = `10.78.${n++}.1`;
      data = await init(ip);
    } while (data.image.kind !== 'slide');
    expect((await submit(ip, data, [])).status).toBe(422);
    data = await init(ip);
    expect(data.image.kind).toBe('slide');
    const x = (openChallenge(api.runtime.keys, app.appId, data.challenge)!.img!.answer as { x: number }).x;
    const passed = await submit(ip, data, {
      x,
      input: 'pointer',
      trajectory: humanDrag(seededRandom('pass'), x),
    });
    expect(passed.status).toBe(200);
    const kinds = new Set<string>();
    for (let i = 0; i < 12; i++) kinds.add((await init(ip)).image.kind);
    // Random again: all twelve the same kind has probability 3 * 3^-12.
    expect(kinds.size).toBeGreaterThan(1);
  }, 120_000);
});

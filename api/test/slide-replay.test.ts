import { seededRandom } from '@gatehouse/core/challenges';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { range } from '../../core/src/challenges/random.ts';
import { humanDrag } from '../../core/src/challenges/test-trajectories.ts';
import type { TrajectoryPoint } from '../../core/src/challenges/trajectory.ts';
import { openChallenge } from '../src/challenges/sealed-challenge.ts';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  REDIS_URL,
  redisAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';

/*
 * A slide drag recorded once and replayed on new challenges, over real HTTP: stretched to each new gap as
 * it was recorded, and again with a pixel of noise on every sample and its clock scaled by 0.85-1.15 (the
 * adversarial bench's replay input). The app remembers the drags it saw, in this process or in Redis, and a
 * near duplicate is a wrong answer; live drags of the human model, sent between the replays, still pass.
 */
const run = await databaseAvailable();
const withRedis = run && (await redisAvailable('the slide replay test on Redis'));

/** Always a slide; velocity and rate limits out of the way. */
const POLICY = {
  invisible_below: 0,
  image_below: 101,
  image_kinds: ['slide'],
  velocity: { ip: [1e9, 1e9], prefix: [1e9, 1e9], app: 1e9 },
  rate_limit: { ip_per_minute: 1e9, high_risk_ip_per_minute: 1e9 },
};

/** The recording stretched to x, its clock scaled and each sample nudged by up to `noise` px. */
function replay(recording: readonly TrajectoryPoint[], x: number, noise: number, seed: string) {
  const rng = seededRandom(seed);
  const k = x / (recording[recording.length - 1] as TrajectoryPoint).x;
  const time = noise ? range(rng, 0.85, 1.15) : 1;
  const out = recording.map((p, i) => ({
    t: p.t * time,
    x: i === 0 ? p.x * k : p.x * k + (noise ? range(rng, -noise, noise) : 0),
    y: p.y + (noise ? range(rng, -noise, noise) : 0),
  }));
  (out[out.length - 1] as TrajectoryPoint).x = x;
  return out;
}

function suite(store: 'memory' | 'redis') {
  let api: TestApi;
  let app: { appKey: string; appId: string };
  const saved = { ...process.env };
  beforeAll(async () => {
    // Drawn inline (read from the process's environment): a pool sheds inits faster than it draws.
    process.env.IMAGE_POOL_SIZE = '0';
    api = await startTestApi({ TRUSTED_PROXIES: 'loopback', ...(store === 'redis' ? { REDIS_URL } : {}) });
    app = await api.createApp({ name: `replay-${store}`, risk_policy: POLICY });
  });
  afterAll(async () => {
    process.env = saved;
    await api?.close();
  });

  /**
   * A new slide challenge and a way to answer it with a drag ending on x. Each from its own network (as
   * forwarded by an ingress), as a script spreading its replays would send them: the price a source pays
   * for its pressure and its wrong answers is another matter, measured elsewhere.
   */
  let sent = 0;
  async function challenge() {
    const n = ++sent;
    const ip = `10.${(n >> 8) & 255}.${n & 255}.9`;
    const res = await api.post(
      '/v1/challenge/init',
      { app_key: app.appKey, action: 'login', signals },
      { ...CHROME, 'X-Forwarded-For': ip },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { challenge_id, challenge } = res.body.data;
    const sealed = openChallenge(api.runtime.keys, app.appId, challenge);
    const x = (sealed!.img!.answer as { x: number }).x;
    const submit = async (trajectory: TrajectoryPoint[]) =>
      (
        await api.post(
          '/v1/challenge/submit',
          {
            app_key: app.appKey,
            challenge_id,
            challenge,
            answer: {
              x: (trajectory[trajectory.length - 1] as TrajectoryPoint).x,
              input: 'pointer',
              trajectory,
            },
          },
          { 'X-Forwarded-For': ip },
        )
      ).status;
    return { x, submit };
  }

  it('one recorded drag passes once in 30 replays, verbatim or with noise, while live drags pass', async () => {
    const first = await challenge();
    const recording = humanDrag(seededRandom(`recording-${store}`), first.x);
    expect(await first.submit(recording)).toBe(200);
    const passes = { verbatim: 0, noise: 0, live: 0 };
    for (let i = 0; i < 30; i++) {
      for (const [how, noise] of [
        ['verbatim', 0],
        ['noise', 0.7],
      ] as const) {
        const c = await challenge();
        if ((await c.submit(replay(recording, c.x, noise, `${store}-${how}-${i}`))) === 200) passes[how]++;
        // A live drag of the human model after each replay: it still passes.
        const live = await challenge();
        if ((await live.submit(humanDrag(seededRandom(`live-${store}-${how}-${i}`), live.x))) === 200)
          passes.live++;
      }
    }
    const seen = JSON.stringify(passes);
    expect(passes.verbatim, seen).toBeLessThanOrEqual(1);
    expect(passes.noise, seen).toBeLessThanOrEqual(1);
    expect(passes.live, seen).toBe(60);
  }, 120_000);
}

describe.runIf(run)('slide replays, remembered in the process', () => suite('memory'));
describe.runIf(withRedis)('slide replays, remembered in Redis', () => suite('redis'));

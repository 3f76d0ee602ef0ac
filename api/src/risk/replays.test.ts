import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../../core/src/challenges/random.ts';
import { humanDrag } from '../../../core/src/challenges/test-trajectories.ts';
import { slidePrint } from '../../../core/src/challenges/trajectory-print.ts';
import { REDIS_URL, redisAvailable } from '../../test/harness.ts';
import { MemoryReplayMemory, REPLAY_MEMORY, RedisReplayMemory, type ReplayMemory } from './replays.ts';

const printOf = (seed: string, x = 150) =>
  slidePrint({ x, input: 'pointer', trajectory: humanDrag(seededRandom(seed), x) })!;

const withRedis = await redisAvailable('the replay memory on Redis');

function behaves(make: () => { one: ReplayMemory; other: ReplayMemory }) {
  it('answers the prints kept under a shared band, per app, and adds the new one', async () => {
    const { one, other } = make();
    const app = `app-${Math.random().toString(36).slice(2)}`;
    const a = printOf('a');
    expect(await one.remember(app, a)).toEqual([]);
    // Another instance sees it (in Redis; the memory pair is one process's memory).
    const seen = await other.remember(app, a);
    expect(seen.length).toBe(1);
    expect(seen[0]).toEqual(a.vector);
    // Another app's drags are not this app's.
    expect(await one.remember(`${app}-2`, a)).toEqual([]);
  });
}

describe('replay memory in the process', () => {
  behaves(() => {
    const memory = new MemoryReplayMemory();
    return { one: memory, other: memory };
  });

  it('forgets a print after its time', async () => {
    const memory = new MemoryReplayMemory();
    const a = printOf('late');
    await memory.remember('app', a, 0);
    expect(await memory.remember('app', a, REPLAY_MEMORY.ttlMs - 1)).toHaveLength(1);
    expect(await memory.remember('app', a, 2 * REPLAY_MEMORY.ttlMs)).toEqual([]);
  });

  it('answers a print kept many times once, and forgets everything past its bound of keys', async () => {
    const memory = new MemoryReplayMemory(50);
    const a = printOf('bounded');
    for (let i = 0; i < 20; i++) await memory.remember('app', a);
    expect((await memory.remember('app', a)).length).toBe(1);
    for (let i = 0; i < 10; i++) await memory.remember(`app-${i}`, printOf(`other-${i}`));
    // Past the bound everything was forgotten rather than grown.
    expect(await memory.remember('app', a)).toEqual([]);
  });
});

describe.runIf(withRedis)('replay memory in Redis, shared by instances', () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });
  behaves(() => {
    clients.push(new Redis(REDIS_URL), new Redis(REDIS_URL));
    return {
      one: new RedisReplayMemory(clients[clients.length - 2]!),
      other: new RedisReplayMemory(clients[clients.length - 1]!),
    };
  });
});

import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, redisAvailable } from '../../test/harness.ts';
import {
  type AnswerHistory,
  MemoryAnswerHistory,
  RETRY_KIND_MS,
  RedisAnswerHistory,
} from './answer-history.ts';

const withRedis = await redisAvailable('the retry kind on Redis');

function behaves(make: () => AnswerHistory) {
  it('keeps the kind of a wrong answer per client until a pass', async () => {
    const history = make();
    const key = `app:${Math.random().toString(36).slice(2)}`;
    expect(await history.retryKind?.(key)).toBeUndefined();
    await history.rememberKind?.(key, 'select');
    expect(await history.retryKind?.(key)).toBe('select');
    expect(await history.retryKind?.(`${key}-other`)).toBeUndefined();
    await history.rememberKind?.(key, null);
    expect(await history.retryKind?.(key)).toBeUndefined();
  });
}

describe('retry kind in the process', () => {
  behaves(() => new MemoryAnswerHistory());
  it('forgets it after RETRY_KIND_MS', async () => {
    const history = new MemoryAnswerHistory();
    await history.rememberKind('k', 'click', 0);
    expect(await history.retryKind('k', RETRY_KIND_MS - 1)).toBe('click');
    expect(await history.retryKind('k', RETRY_KIND_MS)).toBeUndefined();
  });
});

describe.runIf(withRedis)('retry kind in Redis', () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });
  behaves(() => {
    const client = new Redis(REDIS_URL);
    clients.push(client);
    return new RedisAnswerHistory(client);
  });
});

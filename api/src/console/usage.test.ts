import { openDatabase } from '@gatehouse/core/db';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RiskDecisions } from './decisions.ts';
import { UsageRollup } from './usage.ts';

/**
 * The usage rollup keeps the current hour's ISO form between events: the cache must follow the
 * clock to the next hour (and back, if the clock is set back), so every event lands in its own hour.
 */
describe('UsageRollup hour', () => {
  let handle: Awaited<ReturnType<typeof openDatabase>>;
  beforeAll(async () => {
    handle = await openDatabase({ dataDir: 'memory://' });
    await handle.migrate();
  });
  afterAll(() => handle?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts each event in the hour it happened, across hour boundaries', async () => {
    const usage = new UsageRollup(handle.db, pino({ level: 'silent' }), 3_600_000);
    try {
      const base = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
      vi.useFakeTimers({ toFake: ['Date'] });
      const at = (ms: number, metric: string) => {
        vi.setSystemTime(ms);
        usage.record('app_hours', metric);
      };
      at(base + 10, 'a'); // hour 0
      at(base + 3_599_999, 'a'); // hour 0, its last millisecond
      at(base + 3_600_000, 'a'); // hour 1, its first
      at(base + 2 * 3_600_000 + 5, 'b'); // hour 2
      at(base + 3_600_000 + 7, 'a'); // back to hour 1 (a clock set back)
      at(base + 3 * 3_600_000 + 1, 'a'); // hour 3 (this one)
      vi.useRealTimers();
      await usage.flush();
      const hours = await usage.read(['app_hours'], 4);
      expect(hours.map((h) => [h.hour, h.counts])).toEqual([
        [new Date(base).toISOString(), { a: 2 }],
        [new Date(base + 3_600_000).toISOString(), { a: 2 }],
        [new Date(base + 2 * 3_600_000).toISOString(), { b: 1 }],
        [new Date(base + 3 * 3_600_000).toISOString(), { a: 1 }],
      ]);
    } finally {
      await usage.close();
    }
  });
});

describe('RiskDecisions', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lists the newest first with the time each was recorded, per app, in a ring of fixed size', () => {
    const decisions = new RiskDecisions(3);
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = Date.UTC(2026, 10, 27, 12, 0, 0, 0);
    const one = (i: number, app: string) => {
      vi.setSystemTime(t0 + i * 1000);
      decisions.record({
        app_key: app,
        action: 'login',
        ip: `10.0.0.${i}`,
        score: i,
        tier: 'invisible',
        reasons: [`r${i}`],
      });
    };
    one(1, 'x');
    one(2, 'y');
    expect(decisions.recent(10)).toEqual([
      {
        at: '2026-11-27T12:00:02.000Z',
        app_key: 'y',
        action: 'login',
        ip: '10.0.0.2',
        score: 2,
        tier: 'invisible',
        reasons: ['r2'],
      },
      {
        at: '2026-11-27T12:00:01.000Z',
        app_key: 'x',
        action: 'login',
        ip: '10.0.0.1',
        score: 1,
        tier: 'invisible',
        reasons: ['r1'],
      },
    ]);
    one(3, 'x');
    one(4, 'x'); // the ring holds 3: the first is gone
    expect(decisions.recent(10).map((d) => [d.at, d.ip])).toEqual([
      ['2026-11-27T12:00:04.000Z', '10.0.0.4'],
      ['2026-11-27T12:00:03.000Z', '10.0.0.3'],
      ['2026-11-27T12:00:02.000Z', '10.0.0.2'],
    ]);
    expect(decisions.recent(10, 'x').map((d) => d.ip)).toEqual(['10.0.0.4', '10.0.0.3']);
    expect(decisions.recent(1).map((d) => d.ip)).toEqual(['10.0.0.4']);
    expect(Object.keys(decisions.recent(1)[0]!)[0]).toBe('at');
  });
});

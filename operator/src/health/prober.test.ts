import { afterEach, describe, expect, it, vi } from 'vitest';
import { MainApiProber } from './prober.ts';

const settings = { intervalMs: 100, timeoutMs: 50, failAfter: 3, recoverAfter: 3 };

/** A prober whose probes answer from `script` (true = healthy), one entry per tick. */
function scripted(script: boolean[]) {
  const changes: string[] = [];
  let i = 0;
  const prober = new MainApiProber(
    settings,
    (app, region, healthy) => changes.push(`${app}/${region}:${healthy ? 'up' : 'down'}`),
    {
      probe: async () => script[Math.min(i++, script.length - 1)] as boolean,
    },
  );
  return { prober, changes };
}

let started = false;
/** Runs exactly `n` more probes (the first one fires at once, the next ones every interval). */
async function ticks(n: number) {
  for (let k = 0; k < n; k++) {
    await vi.advanceTimersByTimeAsync(started ? settings.intervalMs : 0);
    started = true;
  }
}

describe('MainApiProber', () => {
  afterEach(() => {
    vi.useRealTimers();
    started = false;
  });

  it('one success makes a new region healthy; a single failure changes nothing', async () => {
    vi.useFakeTimers();
    const { prober, changes } = scripted([true, false, true, false, false, true]);
    prober.sync('ns/app', [{ name: 'eu', url: 'http://eu' }]);
    await ticks(6);
    expect(changes).toEqual(['ns/app/eu:up']);
    expect(prober.health('ns/app', 'eu')).toMatchObject({ healthy: true });
    prober.stop();
  });

  it('goes down after failAfter failures in a row and up after recoverAfter successes in a row', async () => {
    vi.useFakeTimers();
    const { prober, changes } = scripted([
      true,
      false,
      false,
      false,
      true,
      true,
      false,
      true,
      true,
      true,
      true,
    ]);
    prober.sync('ns/app', [{ name: 'eu', url: 'http://eu' }]);
    await ticks(4);
    expect(changes).toEqual(['ns/app/eu:up', 'ns/app/eu:down']);
    expect(prober.health('ns/app', 'eu')).toMatchObject({ healthy: false, failures: 3 });
    await ticks(3);
    expect(changes).toHaveLength(2);
    await ticks(4);
    expect(changes).toEqual(['ns/app/eu:up', 'ns/app/eu:down', 'ns/app/eu:up']);
    prober.stop();
  });

  it('a main API that never answers is judged down after failAfter probes', async () => {
    vi.useFakeTimers();
    const { prober, changes } = scripted([false]);
    prober.sync('ns/app', [{ name: 'us', url: 'http://us' }]);
    await ticks(2);
    expect(prober.health('ns/app', 'us')?.healthy).toBeUndefined();
    await ticks(1);
    expect(changes).toEqual(['ns/app/us:down']);
    prober.stop();
  });

  it('sync adds and removes regions, and forget stops everything', async () => {
    vi.useFakeTimers();
    const { prober } = scripted([true]);
    prober.sync('ns/app', [
      { name: 'eu', url: 'http://eu' },
      { name: 'us', url: 'http://us' },
    ]);
    await ticks(1);
    prober.sync('ns/app', [{ name: 'us', url: 'http://us' }]);
    expect(prober.health('ns/app', 'eu')).toBeUndefined();
    expect(prober.health('ns/app', 'us')?.healthy).toBe(true);
    prober.sync('ns/app', [{ name: 'us', url: 'http://us2' }]);
    expect(prober.health('ns/app', 'us')?.healthy).toBeUndefined();
    prober.forget('ns/app');
    expect(prober.health('ns/app', 'us')).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });
});

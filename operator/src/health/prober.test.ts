import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpProbe, MainApiProber } from './prober.ts';

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

describe('MainApiProber at the shipped settings (switch speed and flap damping)', () => {
  // The operator's defaults (config.ts): what the switch goals are measured against.
  const shipped = { intervalMs: 500, timeoutMs: 400, failAfter: 3, recoverAfter: 3 };
  afterEach(() => vi.useRealTimers());

  /** A main API that is down (hangs until the probe's timeout) while `down(now)` says so. */
  function against(down: (now: number) => boolean) {
    const changes: { at: number; healthy: boolean }[] = [];
    const start = Date.now();
    const probe = async (_url: string, timeoutMs: number) => {
      if (!down(Date.now() - start)) return true;
      await new Promise((r) => setTimeout(r, timeoutMs));
      return false;
    };
    const prober = new MainApiProber(
      shipped,
      (_app, _region, healthy) => changes.push({ at: Date.now() - start, healthy }),
      { probe },
    );
    prober.sync('ns/app', [{ name: 'eu', url: 'http://eu' }]);
    return { prober, changes };
  }

  it('a main API that stops answering (probes hang until their timeout) is judged down within 2 s', async () => {
    vi.useFakeTimers();
    const { prober, changes } = against((t) => t >= 10_000);
    await vi.advanceTimersByTimeAsync(20_000);
    prober.stop();
    expect(changes[0]).toMatchObject({ healthy: true });
    const down = changes.find((c) => !c.healthy);
    expect(down).toBeDefined();
    // A hanging probe must not stretch the cadence: 3 probes, 500 ms apart, the last one timing out.
    expect((down?.at ?? 0) - 10_000).toBeLessThanOrEqual(2000);
  });

  it('a main API back up is judged healthy within 2 s', async () => {
    vi.useFakeTimers();
    const { prober, changes } = against((t) => t >= 1000 && t < 5000);
    await vi.advanceTimersByTimeAsync(10_000);
    prober.stop();
    expect(changes.map((c) => c.healthy)).toEqual([true, false, true]);
    expect((changes[2]?.at ?? 0) - 5000).toBeLessThanOrEqual(2000);
  });

  it('5 cycles of 7 s down / 7 s up: every outage switches, but traffic stays on the standby after the second', async () => {
    vi.useFakeTimers();
    const cycles = 5;
    // Healthy for its first 2 s, then the cycles.
    const cycle = (t: number) => t - 2000;
    const { prober, changes } = against(
      (t) => cycle(t) >= 0 && cycle(t) < cycles * 14_000 && cycle(t) % 14_000 < 7000,
    );
    await vi.advanceTimersByTimeAsync(2000 + cycles * 14_000 + 40_000);
    expect(prober.health('ns/app', 'eu')).toMatchObject({ healthy: true, damped: false });
    prober.stop();
    const downs = changes.filter((c) => !c.healthy);
    // Undamped, this is 5 switches each way; damped: down, back, down again and held until stable.
    expect(downs).toHaveLength(2);
    expect(changes.filter((c) => c.healthy)).toHaveLength(3);
    for (const d of downs) expect(cycle(d.at) % 14_000).toBeLessThanOrEqual(2000);
    // The last recovery waits for 30 s of good probes after the flapping stopped, then comes.
    const last = changes.at(-1);
    expect(last?.healthy).toBe(true);
    expect(last?.at).toBeGreaterThanOrEqual(2000 + cycles * 14_000 - 7000 + 30_000);
  });

  it('a region that first comes up late (its pods starting) is not flapping when its first outage follows soon', async () => {
    vi.useFakeTimers();
    const { prober, changes } = against((t) => t < 6000 || (t >= 20_000 && t < 25_000));
    await vi.advanceTimersByTimeAsync(40_000);
    prober.stop();
    expect(changes.map((c) => c.healthy)).toEqual([false, true, false, true]);
    expect((changes[3]?.at ?? 0) - 25_000).toBeLessThanOrEqual(2000);
  });

  it('a single outage after a quiet minute is not damped: back within 2 s of the main API answering', async () => {
    vi.useFakeTimers();
    const { prober, changes } = against((t) => (t >= 1000 && t < 4000) || (t >= 70_000 && t < 75_000));
    await vi.advanceTimersByTimeAsync(80_000);
    prober.stop();
    expect(changes.map((c) => c.healthy)).toEqual([true, false, true, false, true]);
    expect((changes[4]?.at ?? 0) - 75_000).toBeLessThanOrEqual(2000);
  });
});

describe('httpProbe over real HTTP', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

  /** A server whose first `drop` connections are closed before any answer; the rest answer `status`. */
  async function serve(drop: number, status: number) {
    const seen = { connections: 0, requests: 0 };
    const listening = createServer((_req, res) => {
      seen.requests++;
      res.writeHead(status, { connection: 'close' }).end();
    });
    listening.on('connection', (socket: Socket) => {
      if (++seen.connections <= drop) socket.destroy();
    });
    server = listening;
    await new Promise<void>((done) => listening.listen(0, '127.0.0.1', done));
    return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, seen };
  }

  it('tries once more on a new connection when the first closes before any answer', async () => {
    const { url, seen } = await serve(1, 200);
    expect(await httpProbe(url, 2000)).toBe(true);
    expect(seen).toEqual({ connections: 2, requests: 1 });
  });

  it('fails when the second connection fails too', async () => {
    const { url, seen } = await serve(2, 200);
    expect(await httpProbe(url, 2000)).toBe(false);
    expect(seen.connections).toBe(2);
  });

  it('takes an answer as the verdict: a 503 is not tried again', async () => {
    const { url, seen } = await serve(0, 503);
    expect(await httpProbe(url, 2000)).toBe(false);
    expect(seen).toEqual({ connections: 1, requests: 1 });
  });
});

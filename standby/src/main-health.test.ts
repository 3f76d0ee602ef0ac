import { describe, expect, it } from 'vitest';
import { MainHealth } from './main-health.ts';
import { MemoryOutageBoard, type OutageBoard } from './outage-board.ts';

const settings = { intervalMs: 1000, timeoutMs: 500, failAfter: 3, recoverAfter: 2 };

describe('MainHealth', () => {
  it('starts up and online: a fresh standby never takes traffic', () => {
    const health = new MainHealth('http://127.0.0.1:1', settings);
    expect(health.status()).toMatchObject({ main: 'up', serving: false });
  });
  it('goes down only after failAfter consecutive failures, and back up after recoverAfter successes', () => {
    const health = new MainHealth('http://127.0.0.1:1', settings);
    const changes: string[] = [];
    health.on('change', (s) => changes.push(s));
    for (const ok of [false, false, true, false, false]) health.record(ok);
    expect(health.serving).toBe(false);
    health.record(false);
    expect(health.serving).toBe(true);
    health.record(true);
    health.record(false);
    health.record(true);
    expect(health.serving).toBe(true);
    health.record(true);
    expect(health.serving).toBe(false);
    expect(changes).toEqual(['down', 'up']);
  });
  it('obeys the operator: serve and online override the probes, auto returns to them', () => {
    const health = new MainHealth('http://127.0.0.1:1', settings);
    health.setMode('serve');
    expect(health.serving).toBe(true);
    for (let i = 0; i < 5; i++) health.record(false);
    health.setMode('online');
    expect(health.serving).toBe(false);
    health.setMode('auto');
    expect(health.serving).toBe(true);
  });
  it('probes a real endpoint: a closed port is a failure', async () => {
    expect(await new MainHealth('http://127.0.0.1:9', settings).probeOnce()).toBe(false);
  });

  describe('with peers on an outage board', () => {
    function seesOutage(health: MainHealth) {
      for (let i = 0; i < settings.failAfter; i++) health.record(false);
    }

    it("serves on a peer's fresh declaration while its own probes still see the main API up", async () => {
      const board = new MemoryOutageBoard();
      const bypass = new MainHealth('http://127.0.0.1:1', settings, board);
      const fallback = new MainHealth('http://127.0.0.1:1', settings, board);
      expect(await fallback.servingNow()).toBe(false);
      seesOutage(bypass);
      expect(bypass.serving).toBe(true);
      // The fallback's own view is unchanged (its status says so); requests are served all the same.
      expect(fallback.serving).toBe(false);
      expect(await fallback.servingNow()).toBe(true);
      // The operator's word beats a peer's: `online` refuses.
      fallback.setMode('online');
      expect(await fallback.servingNow()).toBe(false);
      // And a process the operator holds `online` declares nothing, whatever its probes see.
      const quiet = new MemoryOutageBoard();
      const held = new MainHealth('http://127.0.0.1:1', settings, quiet);
      held.setMode('online');
      seesOutage(held);
      expect(await quiet.declared()).toBe(false);
    });

    it('a peer that recovers withdraws at once; one that crashed lapses a few probes later', async () => {
      const quick = { intervalMs: 10, timeoutMs: 10, failAfter: 1, recoverAfter: 1 };
      const board = new MemoryOutageBoard();
      const recovering = new MainHealth('http://127.0.0.1:1', quick, board);
      const crashed = new MainHealth('http://127.0.0.1:1', quick, board);
      const self = new MainHealth('http://127.0.0.1:1', quick, board);
      recovering.record(false);
      recovering.record(true);
      expect(await self.servingNow()).toBe(false);
      recovering.record(false);
      crashed.record(false); // and never probes again
      recovering.record(true);
      expect(await self.servingNow()).toBe(true);
      await new Promise((r) => setTimeout(r, 3 * (quick.intervalMs + quick.timeoutMs) + 20));
      expect(await self.servingNow()).toBe(false);
    });

    it('a board that fails or hangs leaves the answer to its own view, without holding the request', async () => {
      const down = () => Promise.reject(new Error('store down'));
      const failing: OutageBoard = { declare: down, withdraw: down, declared: down };
      const hanging: OutageBoard = {
        declare: () => new Promise(() => {}),
        withdraw: () => new Promise(() => {}),
        declared: () => new Promise(() => {}),
      };
      for (const board of [failing, hanging]) {
        const health = new MainHealth('http://127.0.0.1:1', settings, board);
        const started = performance.now();
        expect(await health.servingNow()).toBe(false);
        expect(performance.now() - started).toBeLessThan(2_000);
        seesOutage(health); // declaring into a broken board neither throws nor stops it serving
        expect(await health.servingNow()).toBe(true);
      }
    });
  });

  it('records the window it serves in (probes or the operator), extended while it lasts, closed on recovery', async () => {
    const windows = new Map<string, [number, number]>();
    const record = async (by: string, start: number, until: number) => {
      windows.set(`${by}|${start}`, [start, until]);
    };
    const health = new MainHealth('http://127.0.0.1:1', settings, undefined, record);
    health.record(false);
    health.record(false);
    expect(windows.size).toBe(0);
    const before = Date.now();
    health.record(false);
    expect(windows.size).toBe(1);
    const [[start, until]] = [...windows.values()] as [[number, number]];
    expect(start).toBeGreaterThanOrEqual(before);
    // Projected a few probes ahead while open, so a crashed process's window closes on its own.
    expect(until).toBeGreaterThanOrEqual(start + 3 * (settings.intervalMs + settings.timeoutMs));
    health.record(true);
    health.record(true);
    const [[, closed]] = [...windows.values()] as [[number, number]];
    expect(closed).toBeLessThan(until);
    expect(closed).toBeGreaterThanOrEqual(start);
    // The operator's `serve` opens a new window at once (a later start: a new entry); `online` closes it.
    await new Promise((r) => setTimeout(r, 5));
    health.setMode('serve');
    expect(windows.size).toBe(2);
    health.setMode('online');
    expect(Math.max(...[...windows.values()].map(([, u]) => u))).toBeLessThanOrEqual(Date.now());
  });
});

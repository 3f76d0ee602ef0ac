import { existsSync, readFileSync } from 'node:fs';
import type { ChallengeKind } from '@gatehouse/core/challenges';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DrawnImage,
  ImagePool,
  ImageWorkers,
  imagePoolSettings,
  PoolEmpty,
  rendererEnv,
} from './image-pool.ts';

const KINDS: ChallengeKind[] = ['slide', 'click', 'select'];

/** A fake drawer: each call a new serial, resolved when the test says so (or at once). */
function drawer(auto = true) {
  let serial = 0;
  const held: (() => void)[] = [];
  const draw = (kind: ChallengeKind): Promise<DrawnImage> => {
    const image = { kind, view: { serial: serial++ }, answer: { x: serial } as never };
    if (auto) return Promise.resolve(image);
    return new Promise((resolve) => held.push(() => resolve(image)));
  };
  return {
    draw,
    release: () => {
      for (const r of held.splice(0)) r();
    },
    calls: () => serial,
  };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe('ImagePool', () => {
  const pools: ImagePool[] = [];
  afterEach(() => {
    for (const p of pools.splice(0)) p.close();
  });
  function pool(options: Partial<ConstructorParameters<typeof ImagePool>[0]>) {
    const p = new ImagePool({
      kinds: KINDS,
      perKind: 4,
      concurrency: 2,
      render: drawer().draw,
      inline: () => Promise.reject(new Error('inline not expected')),
      ...options,
    });
    pools.push(p);
    return p;
  }

  it('fills every kind up to its bound and no further', async () => {
    const render = drawer();
    const p = pool({ render: render.draw }).start();
    await settle();
    for (const kind of KINDS) expect(p.size(kind)).toBe(4);
    expect(render.calls()).toBe(12);
  });

  it('serves each challenge once, and refills in the background after each take', async () => {
    const p = pool({}).start();
    await settle();
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const image = await p.take('slide');
      const serial = (image.view as { serial: number }).serial;
      expect(seen.has(serial)).toBe(false);
      seen.add(serial);
      expect(image.kind).toBe('slide');
      await settle();
      expect(p.size('slide')).toBe(4);
    }
    expect(p.stats).toMatchObject({ served: 40, inline: 0 });
  });

  it('waiting 0: an empty pool draws inline instead of serving anything twice', async () => {
    const render = drawer(false);
    const inline = drawer();
    const p = pool({ render: render.draw, inline: inline.draw }).start();
    const a = await p.take('click');
    const b = await p.take('click');
    expect(a).not.toBe(b);
    expect(p.stats).toMatchObject({ served: 0, inline: 2 });
    // Never more renders in flight than the concurrency, however many takes arrive.
    expect(render.calls()).toBe(2);
    render.release();
    await settle();
    expect(p.size('click') + p.size('slide') + p.size('select')).toBeGreaterThan(0);
  });

  it('a failing renderer pauses instead of spinning, and inline drawing keeps answering', async () => {
    let calls = 0;
    const p = pool({
      render: () => {
        calls++;
        return Promise.reject(new Error('no canvas'));
      },
      inline: drawer().draw,
      retryMs: 60_000,
    }).start();
    await settle();
    expect(calls).toBe(2);
    expect((await p.take('select')).kind).toBe('select');
    await settle();
    expect(calls).toBe(2);
    expect(p.stats.failed).toBe(2);
  });

  it('an empty kind: takes wait for the next render of it, each served once, never drawn inline', async () => {
    const render = drawer(false);
    const p = pool({ render: render.draw, waiting: 8 }).start();
    const takes = [p.take('click'), p.take('click'), p.take('click')];
    await settle();
    // Demand for click outranks filling the other kinds.
    render.release();
    await settle();
    render.release();
    await settle();
    render.release();
    const images = await Promise.all(takes);
    expect(new Set(images.map((i) => (i.view as { serial: number }).serial)).size).toBe(3);
    for (const image of images) expect(image.kind).toBe('click');
    expect(p.stats).toMatchObject({ served: 0, inline: 0, waited: 3, shed: 0 });
  });

  it('beyond the bound of waiting takes, or past the wait, a take is shed (PoolEmpty)', async () => {
    const render = drawer(false);
    const p = pool({ render: render.draw, waiting: 2, waitMs: 50 }).start();
    const waiting = [p.take('slide'), p.take('select')];
    await expect(p.take('slide')).rejects.toBeInstanceOf(PoolEmpty);
    for (const w of waiting) await expect(w).rejects.toBeInstanceOf(PoolEmpty);
    expect(p.stats).toMatchObject({ served: 0, inline: 0, waited: 0, shed: 3 });
    // Renders that finish after their takes gave up stock the pool; nothing is lost or served twice.
    render.release();
    await settle();
    expect(p.size('slide') + p.size('click') + p.size('select')).toBe(2);
  });

  it('while drawing fails, a take of an empty kind is shed at once instead of waiting; it waits again once renders succeed', async () => {
    let broken = true;
    const working = drawer();
    const p = pool({
      render: (kind) => (broken ? Promise.reject(new Error('renderer down')) : working.draw(kind)),
      waiting: 8,
      waitMs: 60_000,
      retryMs: 30,
    }).start();
    await settle();
    const outcome = (take: Promise<DrawnImage>) =>
      Promise.race([
        take.then(
          () => 'served',
          (e) => (e instanceof PoolEmpty ? 'shed' : 'failed'),
        ),
        settle().then(() => 'still waiting'),
      ]);
    expect(await outcome(p.take('click'))).toBe('shed');
    expect(p.stats).toMatchObject({ served: 0, waited: 0, shed: 1 });
    broken = false;
    await new Promise((r) => setTimeout(r, 60));
    expect(await outcome(p.take('click'))).toBe('served');
  });

  it('IMAGE_POOL_SIZE, IMAGE_POOL_WORKERS and IMAGE_POOL_WAITING are read and checked', () => {
    expect(imagePoolSettings({})).toEqual({ perKind: 8, workers: 1, waiting: 64 });
    expect(
      imagePoolSettings({ IMAGE_POOL_SIZE: '0', IMAGE_POOL_WORKERS: '2', IMAGE_POOL_WAITING: '0' }),
    ).toEqual({ perKind: 0, workers: 2, waiting: 0 });
    expect(() => imagePoolSettings({ IMAGE_POOL_WAITING: 'many' })).toThrow(/IMAGE_POOL_WAITING/);
    expect(() => imagePoolSettings({ IMAGE_POOL_SIZE: '-1' })).toThrow(/IMAGE_POOL_SIZE/);
  });
});

describe('ImageWorkers: real drawing in renderer processes', () => {
  it("a renderer's environment keeps what a process needs, never the API's configuration", () => {
    const env = rendererEnv({
      PATH: '/usr/bin',
      HOME: '/home/node',
      NODE_ENV: 'production',
      LC_CTYPE: 'C.UTF-8',
      MALLOC_ARENA_MAX: '4',
      NODE_OPTIONS: '--max-old-space-size=4096',
      DATABASE_URL: 'postgres://u:p@db/gatehouse',
      GATEHOUSE_ADMIN_TOKEN: 'secret',
      REDIS_URL: 'redis://r',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/node',
      NODE_ENV: 'production',
      LC_CTYPE: 'C.UTF-8',
      MALLOC_ARENA_MAX: '4',
    });
    expect(rendererEnv({}).MALLOC_ARENA_MAX).toBe('1');
  });

  it('draws unique challenges of each kind, with images and a sealed-side answer', async () => {
    const workers = new ImageWorkers(1);
    try {
      const images = await Promise.all([...KINDS, ...KINDS].map((kind) => workers.draw(kind)));
      const views = new Set(images.map((i) => JSON.stringify(i.view)));
      expect(views.size).toBe(6);
      for (const [i, image] of images.entries()) {
        expect(image.kind).toBe(KINDS[i % 3]);
        expect(JSON.stringify(image.view)).toMatch(/data:image\/jpeg;base64,/);
        expect(image.answer).toBeTruthy();
      }
      // Drawn in another process: this one's pid is not among the renderers'.
      expect(workers.pids()).toHaveLength(1);
      expect(workers.pids()).not.toContain(process.pid);
    } finally {
      await workers.close();
    }
  });

  it('a renderer killed (kill -9) fails its draws, draws fail at once while it is down, and it is restarted with a doubling backoff', async () => {
    const events: string[] = [];
    const workers = new ImageWorkers(1, {
      restartMs: 100,
      onEvent: (e) => events.push(`${e.type} ${e.detail}`),
    });
    const gone = (pid: number) =>
      !existsSync(`/proc/${pid}`) || /State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    try {
      await workers.draw('slide');
      const [first] = workers.pids();
      const inFlight = KINDS.map((kind) =>
        workers.draw(kind).then(
          () => 'drawn',
          (e: Error) => e.message,
        ),
      );
      process.kill(first!, 'SIGKILL');
      const outcomes = await Promise.all(inFlight);
      expect(outcomes).toContain('image renderer exited');
      // Down (until the restart 100 ms later): no renderer to queue on, so the pool hears of it at once (and sheds).
      expect(workers.pids()).toEqual([]);
      await expect(workers.draw('click')).rejects.toThrow('no image renderer running');
      await expect.poll(() => gone(first!)).toBe(true);
      // Restarted after 100 ms; killed again before it drew anything: the next wait doubles.
      await expect.poll(() => workers.pids().length, { timeout: 5_000 }).toBe(1);
      const second = workers.pids()[0]!;
      expect(second).not.toBe(first);
      process.kill(second, 'SIGKILL');
      await expect.poll(() => workers.pids().includes(second), { timeout: 5_000 }).toBe(false);
      await expect.poll(() => workers.pids().length, { timeout: 5_000 }).toBe(1);
      const third = workers.pids()[0]!;
      expect(third).not.toBe(second);
      // A render served resets the backoff.
      expect((await workers.draw('select')).kind).toBe('select');
      process.kill(third, 'SIGKILL');
      await expect.poll(() => workers.pids().includes(third), { timeout: 5_000 }).toBe(false);
      await expect.poll(() => workers.pids().length, { timeout: 5_000 }).toBe(1);
      expect((await workers.draw('click')).kind).toBe('click');
      expect(
        events.filter((e) => e.startsWith('exit')).map((e) => /restarting in (\d+) ms/.exec(e)?.[1]),
      ).toEqual(['100', '200', '100']);
      expect(workers.starts).toBe(4);
    } finally {
      await workers.close();
    }
    expect(workers.pids()).toEqual([]);
  });
});

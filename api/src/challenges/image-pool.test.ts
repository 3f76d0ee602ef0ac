import type { ChallengeKind } from '@gatehouse/core/challenges';
import { afterEach, describe, expect, it } from 'vitest';
import { type DrawnImage, ImagePool, ImageWorkers, imagePoolSettings, PoolEmpty } from './image-pool.ts';

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

  it('IMAGE_POOL_SIZE, IMAGE_POOL_WORKERS and IMAGE_POOL_WAITING are read and checked', () => {
    expect(imagePoolSettings({})).toEqual({ perKind: 8, workers: 1, waiting: 64 });
    expect(
      imagePoolSettings({ IMAGE_POOL_SIZE: '0', IMAGE_POOL_WORKERS: '2', IMAGE_POOL_WAITING: '0' }),
    ).toEqual({ perKind: 0, workers: 2, waiting: 0 });
    expect(() => imagePoolSettings({ IMAGE_POOL_WAITING: 'many' })).toThrow(/IMAGE_POOL_WAITING/);
    expect(() => imagePoolSettings({ IMAGE_POOL_SIZE: '-1' })).toThrow(/IMAGE_POOL_SIZE/);
  });
});

describe('ImageWorkers: real drawing in a worker thread', () => {
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
    } finally {
      await workers.close();
    }
  });
});

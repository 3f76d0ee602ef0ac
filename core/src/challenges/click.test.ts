import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLICK_HEIGHT,
  CLICK_TIMING,
  CLICK_WIDTH,
  type ClickChallenge,
  generateClick,
  verifyClick,
} from './click.ts';
import { seededRandom } from './random.ts';
import { decode, hasSignature, jsonPart, luma } from './test-images.ts';

const challenges: ClickChallenge[] = await Promise.all(
  Array.from({ length: 12 }, (_, i) => generateClick(seededRandom(`click-${i}`))),
);

describe('generateClick', () => {
  it('returns decodable images: the scene at its documented size, the prompt one slot per target', async () => {
    for (const { view, answer } of challenges) {
      expect(hasSignature(view.image) && hasSignature(view.promptImage)).toBe(true);
      const [img, prompt] = await Promise.all([decode(view.image), decode(view.promptImage)]);
      expect([img.width, img.height]).toEqual([CLICK_WIDTH, CLICK_HEIGHT]);
      const n = answer.targets.length;
      expect([prompt.width, prompt.height]).toEqual([n * 40 + (n - 1) * 16, 40]);
      expect(view.image.data.length + view.promptImage.data.length).toBeLessThan(30 * 1024);
      // Each prompt slot holds a dark silhouette.
      for (let i = 0; i < n; i++) {
        let dark = 0;
        for (let y = 0; y < 40; y++)
          for (let x = i * 56; x < i * 56 + 40; x++) if (luma(prompt, x, y) < 80) dark++;
        expect(dark).toBeGreaterThan(150);
      }
    }
  });

  it('asks for 3–4 targets, inside the image and apart from each other', () => {
    for (const { answer } of challenges) {
      expect(answer.targets.length).toBeGreaterThanOrEqual(3);
      expect(answer.targets.length).toBeLessThanOrEqual(4);
      for (const t of answer.targets) {
        expect(t.x - t.r + 4).toBeGreaterThanOrEqual(0);
        expect(t.x + t.r - 4).toBeLessThanOrEqual(CLICK_WIDTH);
        expect(t.y + t.r - 4).toBeLessThanOrEqual(CLICK_HEIGHT);
        for (const u of answer.targets) {
          if (u !== t) expect(Math.hypot(t.x - u.x, t.y - u.y)).toBeGreaterThan(t.r + u.r);
        }
      }
    }
  });

  it('leaks nothing: apart from the count, the JSON part of every view is the same', () => {
    const strip = ({ view }: ClickChallenge) => {
      const json = jsonPart(view) as {
        prompt: { params: { count: number } };
        promptImage: { width: number };
      };
      expect(json.prompt.params).toEqual({ count: view.prompt.params.count });
      json.prompt.params.count = 0;
      json.promptImage.width = 0;
      return json;
    };
    const first = strip(challenges[0] as ClickChallenge);
    for (const c of challenges) expect(strip(c)).toEqual(first);
  });

  it('fills each symbol with stripes, not a uniform patch: its inside varies like texture, not like noise', async () => {
    // Luma spread over the inner half of each target. A uniform fill under the lighting gradient and the
    // noise spreads by about 10; stripes of two colours far apart in lightness by 25 or more.
    for (const { view, answer } of challenges) {
      const img = await decode(view.image);
      for (const t of answer.targets) {
        const r = t.r - 4;
        const values: number[] = [];
        for (let y = Math.ceil(t.y - r / 2); y <= t.y + r / 2; y++)
          for (let x = Math.ceil(t.x - r / 2); x <= t.x + r / 2; x++)
            if (Math.hypot(x - t.x, y - t.y) <= r / 2) values.push(luma(img, x, y));
        const mean = values.reduce((a, v) => a + v, 0) / values.length;
        const sd = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
        expect(sd).toBeGreaterThan(18);
      }
    }
  });

  it('keeps the answer small, for sealing', () => {
    for (const { answer } of challenges) expect(JSON.stringify(answer).length).toBeLessThan(200);
  });
});

describe('verifyClick', () => {
  const answer = {
    targets: [
      { x: 50, y: 60, r: 20 },
      { x: 200, y: 150, r: 24 },
      { x: 120, y: 40, r: 18 },
    ],
  };
  const human = (pts = answer.targets) => pts.map((p, i) => ({ x: p.x, y: p.y, t: 1200 + i * 650 }));

  it('accepts the targets clicked in order at a human pace, anywhere within the radius', () => {
    expect(verifyClick(answer, human())).toEqual({ ok: true });
    const edge = answer.targets.map((p) => ({ ...p, x: p.x + p.r }));
    expect(verifyClick(answer, human(edge))).toEqual({ ok: true });
  });

  it('property: any clicks inside each target, in order, with human timing, pass', () => {
    // d stops just short of 1: a point computed exactly on the rim can land a rounding error outside it.
    const click = fc.record({
      a: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
      d: fc.double({ min: 0, max: 0.999, noNaN: true }),
    });
    const gap = fc.integer({ min: CLICK_TIMING.minIntervalMs, max: 5000 });
    fc.assert(
      fc.property(fc.tuple(click, click, click), fc.tuple(gap, gap, gap), (cs, gaps) => {
        let t = CLICK_TIMING.minFirstMs - CLICK_TIMING.minIntervalMs;
        const clicks = answer.targets.map((p, i) => {
          const { a, d } = cs[i] as { a: number; d: number };
          t += gaps[i] as number;
          return { x: p.x + Math.cos(a) * d * p.r, y: p.y + Math.sin(a) * d * p.r, t };
        });
        expect(verifyClick(answer, clicks)).toEqual({ ok: true });
      }),
    );
  });

  it('property: a click outside its own target always fails', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 200 }),
        (i, x, y) => {
          const t = answer.targets[i] as { x: number; y: number; r: number };
          fc.pre(Math.hypot(x - t.x, y - t.y) > t.r);
          const clicks = human();
          clicks[i] = { x, y, t: clicks[i]?.t ?? 0 };
          expect(verifyClick(answer, clicks).ok).toBe(false);
        },
      ),
    );
  });

  it('step 1: refuses malformed input', () => {
    for (const bad of [
      null,
      {},
      'clicks',
      [{ x: 1, y: 2 }],
      [{ x: 1, y: 2, t: -5 }],
      [{ x: Number.NaN, y: 1, t: 1 }],
    ]) {
      expect(verifyClick(answer, bad)).toEqual({ ok: false, reason: 'malformed' });
    }
    const backwards = human();
    (backwards[2] as { t: number }).t = 10;
    expect(verifyClick(answer, backwards)).toEqual({ ok: false, reason: 'malformed' });
    expect(
      verifyClick(
        answer,
        Array.from({ length: 13 }, () => human()[0]),
      ),
    ).toEqual({ ok: false, reason: 'malformed' });
  });

  it('step 2: refuses too few or too many clicks', () => {
    expect(verifyClick(answer, human().slice(0, 2))).toEqual({ ok: false, reason: 'count' });
    expect(verifyClick(answer, [...human(), { x: 1, y: 1, t: 9000 }])).toEqual({
      ok: false,
      reason: 'count',
    });
    expect(verifyClick(answer, [])).toEqual({ ok: false, reason: 'count' });
  });

  it('step 3: refuses inhuman timing', () => {
    const instant = human().map((c, i) => ({ ...c, t: i * 5 }));
    expect(verifyClick(answer, instant)).toEqual({ ok: false, reason: 'too_fast' });
    const rushed = human().map((c, i) => ({ ...c, t: 800 + i * 60 }));
    expect(verifyClick(answer, rushed)).toEqual({ ok: false, reason: 'too_fast' });
    const stale = human().map((c, i) => ({ ...c, t: 200_000 + i * 500 }));
    expect(verifyClick(answer, stale)).toEqual({ ok: false, reason: 'too_slow' });
  });

  it('step 4: tells a wrong order from a miss', () => {
    const [a, b, c] = answer.targets as [
      (typeof answer.targets)[0],
      (typeof answer.targets)[0],
      (typeof answer.targets)[0],
    ];
    expect(verifyClick(answer, human([b, a, c]))).toEqual({ ok: false, reason: 'order' });
    expect(verifyClick(answer, human([a, b, { x: 290, y: 190, r: 0 }]))).toEqual({
      ok: false,
      reason: 'position',
    });
  });
});

import { describe, expect, it } from 'vitest';
import {
  CHALLENGE_KINDS,
  cryptoRandom,
  generateChallenge,
  MAX_ATTEMPTS,
  seededRandom,
  verifyChallenge,
} from './index.ts';
import { int, sample, shuffle } from './random.ts';
import { humanDrag } from './test-trajectories.ts';

describe('challenges index', () => {
  it('generates every kind with the crypto source by default, and the view never carries the answer', async () => {
    for (const kind of CHALLENGE_KINDS) {
      const c = await generateChallenge(kind);
      expect(c.kind).toBe(kind);
      expect(c.view.kind).toBe(kind);
      expect(Object.keys(c.view)).not.toContain('answer');
      expect(JSON.stringify(c.answer).length).toBeLessThan(200);
    }
  });

  it('routes verification by kind', async () => {
    const slide = await generateChallenge('slide', { rng: seededRandom(1) });
    if (slide.kind !== 'slide') throw new Error('expected a slide');
    const x = slide.answer.x;
    expect(
      verifyChallenge('slide', slide.answer, {
        x,
        input: 'pointer',
        trajectory: humanDrag(seededRandom(2), x),
      }),
    ).toEqual({
      ok: true,
    });
    expect(verifyChallenge('select', { indices: [0, 2] }, [2, 0])).toEqual({ ok: true });
    expect(verifyChallenge('click', { targets: [{ x: 5, y: 5, r: 5 }] }, 'nonsense')).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('docs usage example (docs/challenges.md, "Use")', async () => {
    const log = { info: (_o: object, _m: string) => {} };
    const challenge = await generateChallenge('slide');
    const openedAnswer = JSON.parse(JSON.stringify(challenge.answer)); // as if sealed and opened
    const requestBody = { answer: { x: 10, input: 'pointer', trajectory: [] } };
    const verdict = verifyChallenge('slide', openedAnswer, requestBody.answer);
    if (!verdict.ok) log.info({ reason: verdict.reason }, 'challenge answer refused');
    expect(verdict).toEqual({ ok: false, reason: 'too_few_samples' });
    expect(MAX_ATTEMPTS.slide).toBe(1);
  });

  it('bounds attempts per kind', () => {
    for (const kind of CHALLENGE_KINDS) expect(MAX_ATTEMPTS[kind]).toBeGreaterThanOrEqual(1);
  });
});

describe('random sources', () => {
  it('seeded: the same seed gives the same stream, different seeds differ', () => {
    const a = seededRandom('x');
    const b = seededRandom('x');
    const c = seededRandom('y');
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(xs);
  });

  it('crypto and seeded stay in [0, 1) and int() hits both bounds', () => {
    for (const rng of [cryptoRandom(64), seededRandom(9)]) {
      const seen = new Set<number>();
      for (let i = 0; i < 2000; i++) {
        const v = rng.next();
        expect(v >= 0 && v < 1).toBe(true);
        seen.add(int(rng, 1, 3));
      }
      expect([...seen].sort()).toEqual([1, 2, 3]);
    }
  });

  it('shuffle and sample keep elements and do not touch the input', () => {
    const rng = seededRandom(4);
    const items = [1, 2, 3, 4, 5];
    expect(shuffle(rng, items).sort()).toEqual(items);
    expect(new Set(sample(rng, items, 3)).size).toBe(3);
    expect(items).toEqual([1, 2, 3, 4, 5]);
    expect(() => sample(rng, items, 6)).toThrow();
  });
});

import { CHALLENGE_KINDS, generateChallenge, viewToJson } from '@gatehouse/core/challenges';
import { createCanvas } from '@napi-rs/canvas';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * docs/challenges.md, "Fonts": a server needs no font packages, CJK, Arabic or Hebrew
 * included, because the challenge images draw no text; every word is shown by the widget in the visitor's
 * fonts. Checked by drawing every kind with the canvas's text calls counted.
 */
describe('servers need no fonts', () => {
  const context = Object.getPrototypeOf(createCanvas(1, 1).getContext('2d')) as Record<string, unknown>;
  const calls: string[] = [];
  const saved = new Map<string, unknown>();
  for (const name of ['fillText', 'strokeText', 'measureText']) {
    saved.set(name, context[name]);
    context[name] = function counted(this: unknown, ...args: unknown[]) {
      calls.push(name);
      return (saved.get(name) as (...a: unknown[]) => unknown).apply(this, args);
    };
  }
  afterAll(() => {
    for (const [name, fn] of saved) context[name] = fn;
  });

  it('drawing every challenge kind calls no text function of the canvas', async () => {
    for (const kind of CHALLENGE_KINDS) {
      for (let i = 0; i < 3; i++) {
        const challenge = await generateChallenge(kind);
        expect(JSON.stringify(viewToJson(challenge.view))).toMatch(/data:image\//);
      }
    }
    expect(calls).toEqual([]);
    // The hook does see text drawing when there is some.
    createCanvas(10, 10).getContext('2d').fillText('字', 0, 5);
    expect(calls).toEqual(['fillText']);
  });
});

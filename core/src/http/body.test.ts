import { describe, expect, it } from 'vitest';
import { pathOfNul } from './body.ts';

/** pathOfNul first asks whether a body holds a NUL at all, then walks it again for the first one's path. */
describe('pathOfNul', () => {
  it('finds nothing in a body without a NUL, however nested', () => {
    expect(pathOfNul({})).toBeUndefined();
    expect(pathOfNul({ a: 'x', b: [1, 'y', { c: null, d: true }], e: { f: { g: 'z' } } })).toBeUndefined();
  });

  it('names the shallowest NUL, in a value, an array item or a key, at any depth', () => {
    expect(pathOfNul({ a: 'ok', b: 'x\u0000y' })).toBe('b');
    expect(pathOfNul({ a: { b: ['ok', 'x\u0000'] } })).toBe('a.b.1');
    expect(pathOfNul({ deep: { deeper: { deepest: 'x\u0000' } }, shallow: ['\u0000'] })).toBe('shallow.0');
    expect(pathOfNul({ a: { 'k\u0000': 1 } })).toBe('a');
    expect(pathOfNul({ 'k\u0000': 1 })).toBe('body');
  });

  it('walks a deeply nested body without exhausting the stack', () => {
    // (The path of a NUL is rebuilt per level, so that walk is quadratic in depth: a body limit bounds it.)
    let body: unknown = 'x\u0000';
    for (let i = 0; i < 1_000; i++) body = [body];
    expect(pathOfNul({ a: body })?.startsWith('a.0.0.0')).toBe(true);
    let clean: unknown = 'x';
    for (let i = 0; i < 100_000; i++) clean = { n: clean };
    expect(pathOfNul({ a: clean })).toBeUndefined();
  });
});

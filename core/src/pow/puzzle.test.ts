import { describe, expect, it } from 'vitest';
import type { PowParams } from './params.ts';
import { createPuzzle, parsePuzzle } from './puzzle.ts';

const params: PowParams = {
  algorithm: 'argon2id',
  memoryKiB: 4096,
  iterations: 1,
  parallelism: 1,
  count: 7,
  target: 2 ** 29,
};

describe('createPuzzle', () => {
  it('adds a fresh 16-byte salt and serializes to a small JSON object', () => {
    const a = createPuzzle(params);
    const b = createPuzzle(params);
    expect(a.salt).not.toBe(b.salt);
    expect(a).toMatchObject({ v: 1, ...params });
    expect(JSON.stringify(a).length).toBeLessThan(160);
    expect(parsePuzzle(JSON.parse(JSON.stringify(a)))?.puzzle).toEqual(a);
  });

  it('uses the injected random source and copies only known fields', () => {
    const puzzle = createPuzzle({ ...params, extra: 'x' } as PowParams, (n) => new Uint8Array(n).fill(7));
    expect(puzzle.salt).toBe(Buffer.alloc(16, 7).toString('base64url'));
    expect(Object.keys(puzzle).sort()).toEqual(
      ['algorithm', 'count', 'iterations', 'memoryKiB', 'parallelism', 'salt', 'target', 'v'].sort(),
    );
  });

  it('throws for parameters outside the limits or a short random source', () => {
    expect(() => createPuzzle({ ...params, memoryKiB: 4 })).toThrow(/memoryKiB/);
    expect(() => createPuzzle({ ...params, count: 0 })).toThrow(/count/);
    expect(() => createPuzzle({ ...params, target: 2 ** 32 + 1 })).toThrow(/target/);
    expect(() => createPuzzle({ ...params, algorithm: 'sha256' as 'argon2id' })).toThrow(/algorithm/);
    expect(() => createPuzzle(params, () => new Uint8Array(8))).toThrow(/16 bytes/);
    expect(() => createPuzzle({ ...params, algorithm: 'scrypt', memoryKiB: 3000 })).toThrow(/power of two/);
    expect(() => createPuzzle({ ...params, algorithm: 'scrypt', iterations: 2 })).toThrow(/iterations = 1/);
    expect(createPuzzle({ ...params, algorithm: 'scrypt' }).algorithm).toBe('scrypt');
  });
});

describe('parsePuzzle', () => {
  const good = createPuzzle(params);

  it('returns null, never throws, for malformed puzzles', () => {
    const bad: unknown[] = [
      null,
      'puzzle',
      42,
      [],
      { ...good, v: 2 },
      { ...good, salt: 'short' },
      { ...good, salt: `${good.salt}AA` },
      { ...good, salt: 7 },
      { ...good, memoryKiB: '4096' },
      { ...good, iterations: 1.5 },
      { ...good, parallelism: 64 },
      { ...good, memoryKiB: 8, parallelism: 2 },
      { ...good, count: 65 },
      { ...good, target: 0 },
      { ...good, target: Number.NaN },
      { ...good, algorithm: 'argon2d' },
    ];
    for (const input of bad) expect(parsePuzzle(input)).toBeNull();
  });
});

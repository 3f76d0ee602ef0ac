import { createHash, randomBytes } from 'node:crypto';

/**
 * The random source every generator draws from. Production passes `cryptoRandom()` so that nothing about a
 * challenge (gap position, symbol order, matching tiles) is predictable from earlier ones; tests and the
 * benchmark pass `seededRandom(seed)` so that a failing case can be replayed exactly.
 */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
}

/** A float in [min, max). */
export function range(rng: Random, min: number, max: number): number {
  return min + rng.next() * (max - min);
}

/** An integer in [min, max], both inclusive. */
export function int(rng: Random, min: number, max: number): number {
  return min + Math.floor(rng.next() * (max - min + 1));
}

/** True with probability p. */
export function chance(rng: Random, p: number): boolean {
  return rng.next() < p;
}

/** One element, uniformly; the list must not be empty. */
export function pick<T>(rng: Random, items: readonly T[]): T {
  if (items.length === 0) throw new Error('pick() needs a non-empty list');
  return items[Math.floor(rng.next() * items.length)] as T;
}

/** A shuffled copy (Fisher–Yates), leaving the input untouched. */
export function shuffle<T>(rng: Random, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** `count` distinct elements in random order. */
export function sample<T>(rng: Random, items: readonly T[], count: number): T[] {
  if (count > items.length) throw new Error(`sample() asked for ${count} of ${items.length} items`);
  return shuffle(rng, items).slice(0, count);
}

/**
 * Deterministic source for tests and benchmarks: sfc32 seeded from SHA-256 of the seed, so any string is a
 * good seed and nearby seeds give unrelated streams. Never use it for challenges served to users.
 */
export function seededRandom(seed: string | number): Random {
  const h = createHash('sha256').update(String(seed)).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const next = (): number => {
    // sfc32 (Chris Doty-Humphrey): small state, passes PractRand, trivially portable.
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // discard the first outputs, as sfc32's author recommends
  return { next };
}

/**
 * Cryptographically secure source (node:crypto), buffered: one challenge draws a few thousand numbers,
 * and one `randomBytes` call per number would dominate generation time.
 */
export function cryptoRandom(bufferBytes = 4096): Random {
  let buf = randomBytes(bufferBytes);
  let pos = 0;
  return {
    next(): number {
      if (pos + 4 > buf.length) {
        buf = randomBytes(bufferBytes);
        pos = 0;
      }
      const v = buf.readUInt32LE(pos);
      pos += 4;
      return v / 4294967296;
    },
  };
}

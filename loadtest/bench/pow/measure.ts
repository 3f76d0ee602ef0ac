/**
 * Runs one candidate through hash-wasm and WebCrypto for about `ms` milliseconds: the same code in a Chromium
 * Web Worker (bundled by run.ts) and in Node. No node: imports.
 */
import { argon2id, scrypt } from 'hash-wasm';
import type { Candidate, Rate } from './candidates.ts';

const salt = new Uint8Array(16);

function password(i: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array([i >>> 24, (i >>> 16) & 255, (i >>> 8) & 255, i & 255]);
}

async function pbkdf2(pwd: Uint8Array<ArrayBuffer>, iterations: number): Promise<ArrayBuffer> {
  const key = await crypto.subtle.importKey('raw', pwd, 'PBKDF2', false, ['deriveBits']);
  return crypto.subtle.deriveBits({ name: 'PBKDF2', salt, iterations, hash: 'SHA-256' }, key, 256);
}

/** One hash of the candidate for attempt i. */
export async function hashOnce(c: Candidate, i: number): Promise<unknown> {
  const pwd = password(i);
  switch (c.kind) {
    case 'argon2id':
    case 'hybrid': {
      const common = { salt, parallelism: 1, hashLength: 32, outputType: 'binary' } as const;
      const first = await argon2id({
        ...common,
        password: pwd,
        memorySize: c.memoryKiB,
        iterations: c.iterations,
      });
      return c.kind === 'hybrid' ? pbkdf2(new Uint8Array(first), c.pbkdf2Iterations) : first;
    }
    case 'scrypt':
      return scrypt({
        password: pwd,
        salt,
        costFactor: c.n,
        blockSize: 8,
        parallelism: 1,
        hashLength: 32,
        outputType: 'binary',
      });
    case 'pbkdf2':
      return pbkdf2(pwd, c.iterations);
  }
}

/** Hashes as many attempts as fit in `ms` (at least two), after one warm-up hash unless `warm` is false. */
export async function measure(c: Candidate, ms: number, warm = true): Promise<Rate> {
  if (warm) await hashOnce(c, 0xffff_ffff);
  const start = performance.now();
  let hashes = 0;
  while (hashes < 2 || performance.now() - start < ms) await hashOnce(c, hashes++);
  return { hashes, ms: performance.now() - start };
}

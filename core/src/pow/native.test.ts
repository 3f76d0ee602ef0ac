import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HashParams } from './hash.ts';
import { wasmHasher } from './hash.ts';
import { nativeHasher } from './native.ts';

describe('nativeHasher (node:crypto, OpenSSL)', () => {
  const native = nativeHasher();

  it('exists on the Node this repository pins (24.7+)', () => {
    expect(native).toBeTypeOf('function');
  });

  it('is byte-identical to hash-wasm on random nonces, salts and cost parameters', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 4, maxLength: 4 }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.oneof(
          fc.record({
            algorithm: fc.constant('argon2id' as const),
            memoryKiB: fc.integer({ min: 32, max: 512 }),
            iterations: fc.integer({ min: 1, max: 3 }),
            parallelism: fc.integer({ min: 1, max: 4 }),
          }),
          fc.record({
            algorithm: fc.constant('scrypt' as const),
            memoryKiB: fc.constantFrom(8, 16, 64, 256),
            iterations: fc.constant(1),
            parallelism: fc.integer({ min: 1, max: 2 }),
          }),
        ),
        async (password, salt, cost) => {
          const params: HashParams = cost;
          const [a, b] = await Promise.all([
            native!(password, salt, params),
            wasmHasher(password, salt, params),
          ]);
          expect(Buffer.from(a).toString('hex')).toBe(Buffer.from(b).toString('hex'));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is byte-identical at production costs (4 MiB and 16 MiB)', async () => {
    const costs: HashParams[] = [
      { algorithm: 'argon2id', memoryKiB: 4096, iterations: 1, parallelism: 1 },
      { algorithm: 'argon2id', memoryKiB: 16384, iterations: 1, parallelism: 1 },
      { algorithm: 'scrypt', memoryKiB: 4096, iterations: 1, parallelism: 1 },
      { algorithm: 'scrypt', memoryKiB: 16384, iterations: 1, parallelism: 1 },
    ];
    const salt = crypto.getRandomValues(new Uint8Array(16));
    for (const params of costs) {
      for (const nonce of [0, 0xffff_ffff]) {
        const password = new Uint8Array(new Uint32Array([nonce]).buffer).reverse();
        const [a, b] = await Promise.all([
          native!(password, salt, params),
          wasmHasher(password, salt, params),
        ]);
        expect(a).toEqual(b);
      }
    }
  });
});

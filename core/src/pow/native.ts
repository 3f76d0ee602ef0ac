import type { PowHasher } from './hash.ts';

/*
 * Server-side fast path: OpenSSL's Argon2id through node:crypto (Node >= 24.7), about 4-5x faster than the
 * WASM build and run on libuv's thread pool, so verification does not block the event loop. It is looked up
 * at run time with process.getBuiltinModule, never imported, so browser bundles of this package stay free
 * of node: modules. native.test.ts proves its output byte-identical to wasmHasher.
 */

type Argon2Callback = (err: Error | null, result: Uint8Array) => void;
type NodeArgon2 = (
  algorithm: 'argon2id',
  parameters: {
    message: Uint8Array;
    nonce: Uint8Array;
    parallelism: number;
    tagLength: number;
    memory: number;
    passes: number;
  },
  callback: Argon2Callback,
) => void;

function nodeArgon2(): NodeArgon2 | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const crypto = proc?.getBuiltinModule?.('node:crypto') as { argon2?: NodeArgon2 } | undefined;
  return typeof crypto?.argon2 === 'function' ? crypto.argon2 : undefined;
}

/** Returns the native Argon2id hasher where node:crypto has one (Node >= 24.7), otherwise undefined. */
export function nativeHasher(): PowHasher | undefined {
  const argon2 = nodeArgon2();
  if (!argon2) return undefined;
  return (password, salt, params) =>
    new Promise((resolve, reject) => {
      argon2(
        'argon2id',
        {
          message: password,
          nonce: salt,
          parallelism: params.parallelism,
          tagLength: 32,
          memory: params.memoryKiB,
          passes: params.iterations,
        },
        (err, result) => (err ? reject(err) : resolve(new Uint8Array(result))),
      );
    });
}

import { HASH_LENGTH, type PowHasher, SCRYPT_BLOCK_SIZE } from './hash.ts';

/*
 * Server-side fast path: OpenSSL's Argon2id and scrypt through node:crypto (Argon2 needs Node >= 24.7), faster
 * than the WASM build and run on libuv's thread pool, so verification does not block the event loop. node:crypto
 * is looked up at run time with process.getBuiltinModule, never imported, so browser bundles of this package
 * stay free of node: modules. native.test.ts proves its output byte-identical to wasmHasher.
 */

type Callback = (err: Error | null, result: Uint8Array) => void;
type NodeCrypto = {
  argon2?: (
    algorithm: 'argon2id',
    parameters: {
      message: Uint8Array;
      nonce: Uint8Array;
      parallelism: number;
      tagLength: number;
      memory: number;
      passes: number;
    },
    callback: Callback,
  ) => void;
  scrypt?: (
    password: Uint8Array,
    salt: Uint8Array,
    keylen: number,
    options: { N: number; r: number; p: number; maxmem: number },
    callback: Callback,
  ) => void;
};

function nodeCrypto(): NodeCrypto | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  return proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;
}

/** Returns a native hasher where node:crypto has both functions (Node >= 24.7), otherwise undefined. */
export function nativeHasher(): PowHasher | undefined {
  const crypto = nodeCrypto();
  const { argon2, scrypt } = crypto ?? {};
  if (typeof argon2 !== 'function' || typeof scrypt !== 'function') return undefined;
  return (password, salt, params) =>
    new Promise((resolve, reject) => {
      const done: Callback = (err, result) => (err ? reject(err) : resolve(new Uint8Array(result)));
      if (params.algorithm === 'scrypt') {
        const bytes = 128 * SCRYPT_BLOCK_SIZE * params.memoryKiB * params.parallelism;
        const options = {
          N: params.memoryKiB,
          r: SCRYPT_BLOCK_SIZE,
          p: params.parallelism,
          maxmem: 2 * bytes + 2 ** 20,
        };
        scrypt.call(crypto, password, salt, HASH_LENGTH, options, done);
        return;
      }
      const parameters = {
        message: password,
        nonce: salt,
        parallelism: params.parallelism,
        tagLength: HASH_LENGTH,
        memory: params.memoryKiB,
        passes: params.iterations,
      };
      argon2.call(crypto, 'argon2id', parameters, done);
    });
}

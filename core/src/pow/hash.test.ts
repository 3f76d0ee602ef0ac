import { argon2Sync, createHash } from 'node:crypto';
import { argon2id, scrypt } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { wasmHasher } from './hash.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/*
 * RFC 9106 section 5.3 uses a secret and associated data. hash-wasm has no associated-data input, so the chain
 * is: node:crypto (OpenSSL) reproduces the RFC vector exactly; hash-wasm equals node:crypto with the RFC's
 * inputs minus the associated data (secret, p=4, m=32, t=3 included) and on the reference implementation's
 * own vector; native.test.ts then shows the two agree on the inputs puzzles use.
 */
describe('Argon2id against the specification', () => {
  const rfc = { message: Buffer.alloc(32, 1), nonce: Buffer.alloc(16, 2), secret: Buffer.alloc(8, 3) };

  it('node:crypto reproduces the RFC 9106 §5.3 Argon2id test vector', () => {
    const tag = argon2Sync('argon2id', {
      ...rfc,
      associatedData: Buffer.alloc(12, 4),
      memory: 32,
      passes: 3,
      parallelism: 4,
      tagLength: 32,
    });
    expect(tag.toString('hex')).toBe('0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659');
  });

  it('hash-wasm equals node:crypto on the RFC 9106 inputs without associated data', async () => {
    const params = { memory: 32, passes: 3, parallelism: 4, tagLength: 32 };
    const wasm = await argon2id({
      password: rfc.message,
      salt: rfc.nonce,
      secret: rfc.secret,
      memorySize: 32,
      iterations: 3,
      parallelism: 4,
      hashLength: 32,
      outputType: 'hex',
    });
    expect(wasm).toBe(argon2Sync('argon2id', { ...rfc, ...params }).toString('hex'));
  });

  it('hash-wasm reproduces the reference implementation vector (password/somesalt, m=2^16, t=2, p=1)', async () => {
    const tag = await wasmHasher(new TextEncoder().encode('password'), new TextEncoder().encode('somesalt'), {
      algorithm: 'argon2id',
      memoryKiB: 65536,
      iterations: 2,
      parallelism: 1,
    });
    expect(hex(tag)).toBe('09316115d5cf24ed5a15a31a3ba326e5cf32edc24702987c02b6566f61913cf7');
  });

  it('is Argon2id, not SHA-256 or another Argon2 variant', async () => {
    const params = { algorithm: 'argon2id', memoryKiB: 64, iterations: 1, parallelism: 1 } as const;
    const salt = new Uint8Array(16);
    const tag = hex(await wasmHasher(new Uint8Array([1, 2, 3, 4]), salt, params));
    expect(tag).not.toBe(
      createHash('sha256')
        .update(new Uint8Array([1, 2, 3, 4]))
        .digest('hex'),
    );
    const argon2d = argon2Sync('argon2d', {
      message: Buffer.from([1, 2, 3, 4]),
      nonce: Buffer.from(salt),
      memory: 64,
      passes: 1,
      parallelism: 1,
      tagLength: 32,
    });
    expect(tag).not.toBe(argon2d.toString('hex'));
  });
});

describe('scrypt against the specification', () => {
  it('hash-wasm reproduces the RFC 7914 §12 vector (password/NaCl, N=1024, r=8, p=16)', async () => {
    const key = await scrypt({
      password: 'password',
      salt: 'NaCl',
      costFactor: 1024,
      blockSize: 8,
      parallelism: 16,
      hashLength: 64,
      outputType: 'hex',
    });
    expect(key).toBe(
      'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
    );
  });

  it('wasmHasher uses r = 8 and a 32-byte output for scrypt puzzles', async () => {
    const tag = await wasmHasher(new TextEncoder().encode('password'), new TextEncoder().encode('NaCl'), {
      algorithm: 'scrypt',
      memoryKiB: 1024,
      iterations: 1,
      parallelism: 16,
    });
    expect(hex(tag)).toBe('fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162');
  });
});

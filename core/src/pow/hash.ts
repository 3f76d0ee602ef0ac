import { argon2id, scrypt } from 'hash-wasm';
import type { PowParams } from './params.ts';

/** Parameters of one attempt's hash: the Argon2 cost fields of a puzzle. */
export type HashParams = Pick<PowParams, 'algorithm' | 'memoryKiB' | 'iterations' | 'parallelism'>;

/** Computes one attempt's 32-byte hash; every implementation must give byte-identical output (tests prove it). */
export type PowHasher = (password: Uint8Array, salt: Uint8Array, params: HashParams) => Promise<Uint8Array>;

/** Length of every attempt's hash in bytes. */
export const HASH_LENGTH = 32;

/** scrypt's block size r; with r = 8 a scrypt of cost N holds N KiB. */
export const SCRYPT_BLOCK_SIZE = 8;

/**
 * Argon2id (RFC 9106, version 0x13) or scrypt (RFC 7914, r = 8) through hash-wasm: the one implementation
 * browsers, Workers and Node share.
 */
export const wasmHasher: PowHasher = (password, salt, params) =>
  params.algorithm === 'scrypt'
    ? scrypt({
        password,
        salt,
        costFactor: params.memoryKiB,
        blockSize: SCRYPT_BLOCK_SIZE,
        parallelism: params.parallelism,
        hashLength: HASH_LENGTH,
        outputType: 'binary',
      })
    : argon2id({
        password,
        salt,
        memorySize: params.memoryKiB,
        iterations: params.iterations,
        parallelism: params.parallelism,
        hashLength: HASH_LENGTH,
        outputType: 'binary',
      });

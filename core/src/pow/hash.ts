import { argon2id } from 'hash-wasm';
import type { PowParams } from './params.ts';

/** Parameters of one attempt's hash: the Argon2 cost fields of a puzzle. */
export type HashParams = Pick<PowParams, 'algorithm' | 'memoryKiB' | 'iterations' | 'parallelism'>;

/** Computes one attempt's 32-byte hash; every implementation must give byte-identical output (tests prove it). */
export type PowHasher = (password: Uint8Array, salt: Uint8Array, params: HashParams) => Promise<Uint8Array>;

/** Length of every attempt's hash in bytes. */
export const HASH_LENGTH = 32;

/** Argon2id (RFC 9106, version 0x13) through hash-wasm: the one implementation browsers, Workers and Node share. */
export const wasmHasher: PowHasher = (password, salt, params) =>
  argon2id({
    password,
    salt,
    memorySize: params.memoryKiB,
    iterations: params.iterations,
    parallelism: params.parallelism,
    hashLength: HASH_LENGTH,
    outputType: 'binary',
  });

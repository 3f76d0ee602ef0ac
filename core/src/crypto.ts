import {
  createHmac,
  createSecretKey,
  hash,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** Compares two strings in constant time for equal lengths; unequal lengths return false early (length is not secret). */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const x = typeof a === 'string' ? Buffer.from(a) : a;
  const y = typeof b === 'string' ? Buffer.from(b) : b;
  if (x.length !== y.length) return false;
  return timingSafeEqual(x, y);
}

/** A MAC key imported once: HMAC with a KeyObject skips re-importing the raw bytes on every call. */
export type MacKey = KeyObject;

export function macKey(raw: Buffer): MacKey {
  return createSecretKey(raw);
}

/** HMAC-SHA-256 of the data, raw bytes. */
export function hmac(key: Buffer | MacKey, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** SHA-256 hex digest; app secrets are 256-bit random values, so a fast hash is the right storage form. */
export function sha256Hex(data: string): string {
  // One-shot: no Hash object per call (every authenticated request hashes the secret it presents).
  return hash('sha256', data, 'hex');
}

/** Derives a purpose- and subject-specific key, so one leaked derived key exposes nothing else. */
export function deriveKey(master: Buffer, purpose: string, subject = ''): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `gatehouse:${purpose}:${subject}`, 32));
}

/** URL-safe random identifier with `bytes` of entropy. */
export function randomId(bytes = 16): string {
  if (bytes > POOLED_MAX) return randomBytes(bytes).toString('base64url');
  const at = take(bytes);
  return pool.toString('base64url', at, at + bytes);
}

/** `size` random bytes, each handed out once, from the pool below. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOLED_MAX) return randomBytes(size);
  const at = take(size);
  return Buffer.from(pool.subarray(at, at + size));
}

/*
 * Small random values (ids, nonces) come from a pool refilled 4 KiB at a time from the CSPRNG, as Node's
 * own randomUUID does: one call into OpenSSL per refill instead of one per value, and a request draws
 * several. Every byte is handed out once; a request never sees another's.
 */
const POOL_BYTES = 4096;
const POOLED_MAX = 64;
let pool = Buffer.alloc(0);
let poolAt = 0;

function take(size: number): number {
  if (poolAt + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += size;
  return at;
}

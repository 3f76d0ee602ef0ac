import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import { pooledRandomBytes } from './crypto.ts';

/**
 * Authenticated encryption (AES-256-GCM) of small JSON values, for state handed to a client and read back
 * later: a sealed challenge carries its own answer, so initialization writes nothing to the database, and
 * the client can neither read nor alter what it holds. Output: base64url(nonce ‖ ciphertext ‖ tag).
 */
const NONCE = 12;
const TAG = 16;
export const MAX_SEALED_LENGTH = 4096;

/** Encrypts and authenticates `value`; `context` (e.g. the app id) must be given again to open it. */
export function sealJson(key: Buffer | KeyObject, value: unknown, context = ''): string {
  const nonce = pooledRandomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(context));
  const encrypted = cipher.update(JSON.stringify(value), 'utf8');
  // final() before the tag is read; the pieces are joined once.
  const last = cipher.final();
  return Buffer.concat([nonce, encrypted, last, cipher.getAuthTag()]).toString('base64url');
}

/** Opens a sealed value: null when it was altered, sealed with another key or context, or is not ours. */
export function openJson(key: Buffer | KeyObject, sealed: string, context = ''): unknown {
  if (typeof sealed !== 'string' || sealed.length > MAX_SEALED_LENGTH || !/^[A-Za-z0-9_-]+$/.test(sealed)) {
    return null;
  }
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length < NONCE + TAG + 2) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(raw.length - TAG));
    const plain = Buffer.concat([decipher.update(raw.subarray(NONCE, raw.length - TAG)), decipher.final()]);
    return JSON.parse(plain.toString('utf8'));
  } catch {
    return null;
  }
}

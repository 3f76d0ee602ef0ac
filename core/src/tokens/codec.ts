import type { z } from 'zod';
import { constantTimeEqual, hmac, type MacKey } from '../crypto.ts';
import { MAX_TOKEN_LENGTH } from './prefix.ts';

/**
 * Sealed token format: `<prefix><payload>.<mac>`, both parts base64url. The MAC (HMAC-SHA-256, truncated
 * to 128 bits) covers prefix and payload, so a forged or altered token is rejected before any database
 * read or write. The payload is readable by whoever holds the token: never put secrets in it.
 */
const MAC_BYTES = 16;
const MAC_CHARS = 22;
const CANONICAL_LAST = 'AQgw';
const B64URL = /^[A-Za-z0-9_-]+$/;

export { MAX_TOKEN_LENGTH };

export function sealToken(prefix: string, key: Buffer | MacKey, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const mac = hmac(key, prefix + body)
    .subarray(0, MAC_BYTES)
    .toString('base64url');
  return `${prefix}${body}.${mac}`;
}

/**
 * Opens a sealed token: 1. check prefix and length, 2. split and check the alphabet, 3. check the MAC in
 * constant time, 4. parse the payload against its schema. Any failure returns null, never throws.
 */
export function openToken<S extends z.ZodType>(
  prefix: string,
  key: Buffer | MacKey,
  token: string,
  schema: S,
): z.infer<S> | null {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !token.startsWith(prefix)) return null;
  const rest = token.slice(prefix.length);
  const dot = rest.indexOf('.');
  if (dot <= 0 || dot !== rest.lastIndexOf('.')) return null;
  const body = rest.slice(0, dot);
  const mac = rest.slice(dot + 1);
  if (!B64URL.test(body) || !B64URL.test(mac)) return null;
  // Compared as bytes: the presented MAC decoded once, the computed one never encoded. Only the canonical
  // spelling passes, as when the strings were compared: 16 bytes are 22 characters whose last one carries 2
  // bits and 4 zero bits (A, Q, g or w); any other last character decodes to the same bytes.
  if (mac.length !== MAC_CHARS || !CANONICAL_LAST.includes(mac[MAC_CHARS - 1]!)) return null;
  const presented = Buffer.from(mac, 'base64url');
  if (!constantTimeEqual(presented, hmac(key, prefix + body).subarray(0, MAC_BYTES))) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const result = schema.safeParse(parsed);
  return result.success ? result.data : null;
}

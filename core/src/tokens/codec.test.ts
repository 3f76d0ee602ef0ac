import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { hmac } from '../crypto.ts';
import { MAX_TOKEN_LENGTH, openToken, sealToken } from './codec.ts';

/*
 * Invariant 4 at the codec: a sealed token opens only exactly as it was sealed, with the key and prefix
 * it was sealed with. Every mutation fast-check can think of is refused, and so is every random string.
 */

const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);
const PREFIX = 'pt_';
const schema = z.object({ id: z.string(), app: z.string(), exp: z.number().int().nonnegative() });
type Payload = z.infer<typeof schema>;

const open = (token: string, key = KEY, prefix = PREFIX) => openToken(prefix, key, token, schema);

/** Realistic payloads: ids and app ids as minted (base64url, UUID), any expiry. */
const b64url = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
const payload = fc.record({ id: b64url, app: fc.uuid(), exp: fc.nat({ max: 2 ** 40 }) });
/** Any payload the schema accepts, including unicode and lone surrogates. */
const anyPayload = fc.record({
  id: fc.string({ unit: 'binary', maxLength: 64 }),
  app: fc.string({ unit: 'binary', maxLength: 64 }),
  exp: fc.maxSafeNat(),
});
/** Characters that may replace one of a token's: its own alphabet, the separator, and anything else. */
const replacement = fc.oneof(
  fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.='),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

function split(token: string): { body: string; mac: string } {
  const [body, mac] = token.slice(PREFIX.length).split('.');
  return { body: body!, mac: mac! };
}

describe('sealToken / openToken', () => {
  it('round-trips every realistic payload', () => {
    fc.assert(
      fc.property(payload, (p) => {
        const token = sealToken(PREFIX, KEY, p);
        expect(token.startsWith(PREFIX)).toBe(true);
        expect(token.length).toBeLessThanOrEqual(MAX_TOKEN_LENGTH);
        expect(open(token)).toEqual(p);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips any payload that fits in MAX_TOKEN_LENGTH, unicode included', () => {
    fc.assert(
      fc.property(anyPayload, (p) => {
        const token = sealToken(PREFIX, KEY, p);
        if (token.length <= MAX_TOKEN_LENGTH) expect(open(token)).toEqual(p);
        else expect(open(token)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('refuses any single-character change', () => {
    fc.assert(
      fc.property(payload, fc.nat(), replacement, (p, at, char) => {
        const token = sealToken(PREFIX, KEY, p);
        const i = at % token.length;
        fc.pre(token[i] !== char);
        const mutated = token.slice(0, i) + char + token.slice(i + 1);
        expect(open(mutated)).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses every single-character change of one token, exhaustively over its alphabet', () => {
    const token = sealToken(PREFIX, KEY, { id: 'abc', app: 'app-1', exp: 1_900_000_000 });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    let tried = 0;
    for (let i = 0; i < token.length; i++) {
      for (const char of alphabet) {
        if (token[i] === char) continue;
        expect(open(token.slice(0, i) + char + token.slice(i + 1))).toBeNull();
        tried++;
      }
    }
    expect(tried).toBe(token.length * (alphabet.length - 1));
  });

  it('refuses every truncation and every appended suffix', () => {
    fc.assert(
      fc.property(payload, fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), (p, suffix) => {
        const token = sealToken(PREFIX, KEY, p);
        for (let n = 0; n < token.length; n++) expect(open(token.slice(0, n))).toBeNull();
        expect(open(token + suffix)).toBeNull();
        expect(open(suffix + token)).toBeNull();
      }),
      { numRuns: 200 },
    );
  });

  it('refuses every other spelling of a genuine MAC: the same bytes with other padding bits, or with padding', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(payload, fc.integer({ min: 1, max: 15 }), (p, k) => {
        const token = sealToken(PREFIX, KEY, p);
        const { body, mac } = split(token);
        expect(open(token)).toEqual(p);
        // The last of 22 characters carries 2 bits of the MAC and 4 padding bits: changing those decodes to
        // the same 16 bytes, a second spelling of one token.
        const last = alphabet.indexOf(mac.at(-1)!);
        const respelled = mac.slice(0, -1) + alphabet[(last & 0b110000) | ((last + k) & 0b001111)]!;
        expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
        expect(open(`${PREFIX}${body}.${respelled}`)).toBeNull();
        expect(open(`${PREFIX}${body}.${mac}==`)).toBeNull();
        expect(open(`${PREFIX}${body}.${mac}A`)).toBeNull();
        expect(open(`${PREFIX}${body}.${mac.slice(0, -1)}`)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a payload swapped between two tokens', () => {
    fc.assert(
      fc.property(payload, payload, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b));
        const ta = split(sealToken(PREFIX, KEY, a));
        const tb = split(sealToken(PREFIX, KEY, b));
        expect(open(`${PREFIX}${ta.body}.${tb.mac}`)).toBeNull();
        expect(open(`${PREFIX}${tb.body}.${ta.mac}`)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a re-encoded payload with a changed field, or merely re-serialized, under the old MAC', () => {
    fc.assert(
      fc.property(
        payload,
        fc.constantFrom<keyof Payload>('id', 'app', 'exp'),
        fc.oneof(b64url, fc.nat()),
        (p, field, value) => {
          const { body, mac } = split(sealToken(PREFIX, KEY, p));
          const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
          expect(decoded).toEqual(p);
          const changed = { ...decoded, [field]: field === 'exp' ? Number(value) || 1 : String(value) };
          fc.pre(JSON.stringify(changed) !== JSON.stringify(decoded));
          const forged = Buffer.from(JSON.stringify(changed)).toString('base64url');
          expect(open(`${PREFIX}${forged}.${mac}`)).toBeNull();
          // Same fields, different bytes (whitespace): the MAC covers the bytes, not the meaning.
          const respaced = Buffer.from(JSON.stringify(decoded, null, 1)).toString('base64url');
          expect(open(`${PREFIX}${respaced}.${mac}`)).toBeNull();
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a token under another prefix, even with the same key (the MAC covers the prefix)', () => {
    fc.assert(
      fc.property(
        payload,
        fc.constantFrom('sct_', 'dg_', 'offline_', 'co_', 'ch_', 'PT_', 'pt', ''),
        (p, other) => {
          const token = sealToken(PREFIX, KEY, p);
          const rest = token.slice(PREFIX.length);
          expect(open(other + rest)).toBeNull();
          expect(open(token, KEY, other || 'x_')).toBeNull();
          if (other) expect(openToken(other, KEY, other + rest, schema)).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a token sealed with another key', () => {
    fc.assert(
      fc.property(payload, fc.uint8Array({ minLength: 32, maxLength: 64 }), (p, raw) => {
        const key = Buffer.from(raw);
        fc.pre(!key.equals(KEY));
        expect(open(sealToken(PREFIX, key, p))).toBeNull();
      }),
      { numRuns: 300 },
    );
    expect(open(sealToken(PREFIX, OTHER_KEY, { id: 'a', app: 'b', exp: 1 }))).toBeNull();
  });

  it('never accepts a random string, nor a random string shaped like a token', () => {
    const shaped = fc
      .tuple(fc.stringMatching(/^[A-Za-z0-9_-]{1,200}$/), fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/))
      .map(([body, mac]) => `${PREFIX}${body}.${mac}`);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 1200 }), shaped), (s) => {
        expect(open(s)).toBeNull();
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a genuine MAC over a payload that is not JSON or not of the schema', () => {
    // The MAC as the codec computes it (checked against a real token first, so this cannot drift).
    const macFor = (body: string) =>
      hmac(KEY, PREFIX + body)
        .subarray(0, 16)
        .toString('base64url');
    const real = split(sealToken(PREFIX, KEY, { id: 'a', app: 'b', exp: 1 }));
    expect(macFor(real.body)).toBe(real.mac);

    for (const text of ['{not json', '', 'null', '"pt"', '[]', '{"id":"a","app":"b","exp":"1"}']) {
      const body = Buffer.from(text).toString('base64url');
      if (body) expect(open(`${PREFIX}${body}.${macFor(body)}`)).toBeNull();
    }
    expect(open(sealToken(PREFIX, KEY, { id: 'x', app: 'y' }))).toBeNull();
    expect(open(sealToken(PREFIX, KEY, { id: 'x', app: 'y', exp: -1 }))).toBeNull();
    expect(open(sealToken(PREFIX, KEY, { id: 'x', app: 'y', exp: 1.5 }))).toBeNull();
    expect(open(sealToken(PREFIX, KEY, [1, 2]))).toBeNull();
  });

  it('refuses anything longer than MAX_TOKEN_LENGTH before checking it', () => {
    const long = sealToken(PREFIX, KEY, { id: 'x'.repeat(900), app: 'a', exp: 1 });
    expect(long.length).toBeGreaterThan(MAX_TOKEN_LENGTH);
    expect(open(long)).toBeNull();
  });

  it('refuses values that are not strings without throwing', () => {
    for (const value of [undefined, null, 42, {}, [], Symbol.iterator]) {
      expect(open(value as unknown as string)).toBeNull();
    }
  });
});

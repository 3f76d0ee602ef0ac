import { randomBytes } from 'node:crypto';
import { type Challenge, createChallenge, type Payload, randomInt, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { Sql } from 'postgres';

/**
 * ALTCHA (altcha-lib 2.8.0, v2) configured as its README does: PBKDF2/SHA-256 at cost 5000, deterministic
 * mode with a counter drawn from 5000..10000, and both HMAC secrets. The key-signature secret is what makes
 * verification cheap: the challenge carries an HMAC of the expected key, so verifySolution checks two HMACs
 * (the parameters', the key's) and never runs PBKDF2; without it, it would re-derive the key (5000 rounds).
 * The one addition is an expiry (10 minutes, as Cap's default): without one, the replay table could never
 * forget a signature.
 *
 * ALTCHA has no server of its own: the widget sends its payload with the form to the integrator's backend,
 * which verifies it and, against replay, records it as used; the framework plugins do so through a store's
 * setIfAbsent. Here the store is a PostgreSQL table, the key the challenge's signature (it covers the
 * nonce the plugins key on), and setIfAbsent an INSERT ... ON CONFLICT DO NOTHING.
 */
const SECRETS = {
  hmacSignatureSecret: randomBytes(32).toString('hex'),
  hmacKeySignatureSecret: randomBytes(32).toString('hex'),
};
const EXPIRES_SECONDS = 600;

export async function createAltcha(sql: Sql) {
  await sql`create table if not exists altcha_used (signature text primary key, used_at bigint not null)`;

  /** A challenge as the README makes it, and the counter it was made with (the answer, which only we know). */
  async function challenge(): Promise<{ challenge: Challenge; counter: number }> {
    const counter = randomInt(5_000, 10_000);
    const made = await createChallenge({
      algorithm: 'PBKDF2/SHA-256',
      cost: 5_000,
      counter,
      deriveKey,
      expiresAt: Math.floor(Date.now() / 1000) + EXPIRES_SECONDS,
      ...SECRETS,
    });
    return { challenge: made, counter };
  }

  /** The integrator's check of a payload: valid, unexpired, and not seen before (recorded only once valid). */
  async function verify(payload: unknown): Promise<boolean> {
    let parsed: Payload;
    try {
      parsed = JSON.parse(Buffer.from(String(payload), 'base64').toString('utf8')) as Payload;
    } catch {
      return false;
    }
    if (!parsed?.challenge?.signature || !parsed.solution) return false;
    const result = await verifySolution({
      challenge: parsed.challenge,
      solution: parsed.solution,
      deriveKey,
      ...SECRETS,
    });
    if (!result.verified) return false;
    const inserted = await sql`insert into altcha_used (signature, used_at)
      values (${parsed.challenge.signature}, ${Date.now()}) on conflict do nothing returning 1`;
    return inserted.length === 1;
  }

  /**
   * A solved payload as the widget would send it, without the widget's search: in deterministic mode the
   * counter is the answer, so one key derivation at it gives the key the solver would have found.
   */
  async function solved(): Promise<string> {
    const { challenge: made, counter } = await challenge();
    const { nonce, salt } = made.parameters;
    // The v2 solver's password: the nonce's bytes, then the counter as a big-endian uint32.
    const password = Buffer.alloc(nonce.length / 2 + 4);
    password.write(nonce, 'hex');
    password.writeUInt32BE(counter, nonce.length / 2);
    const { derivedKey } = await deriveKey(made.parameters, Buffer.from(salt, 'hex'), password);
    const payload: Payload = {
      challenge: { parameters: made.parameters, ...(made.signature ? { signature: made.signature } : {}) },
      solution: { counter, derivedKey: Buffer.from(derivedKey).toString('hex') },
    };
    return Buffer.from(JSON.stringify(payload)).toString('base64');
  }

  return { challenge, verify, solved };
}

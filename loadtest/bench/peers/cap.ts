import { createHash } from 'node:crypto';
import Cap from '@cap.js/server';
import type { Sql } from 'postgres';

/**
 * Cap (@cap.js/server 4.0.5) as an integrator deploys it on PostgreSQL: challenges and tokens in two tables
 * through Cap's `storage` hooks (the shape of its server guide), no state file. Every statement goes through
 * postgres.js, which prepares it, as our API's do.
 *
 * Single use across instances: Cap's redeemChallenge and validateToken call `read`/`get` and then `delete`.
 * The guide's hooks SELECT and then DELETE, so two instances can both pass between the two; here `read` and
 * `get` claim the row (DELETE ... RETURNING) and `delete` has nothing left to do. That is the atomic single
 * use our API has, and one round trip fewer than the guide's hooks: Cap is not handicapped by it.
 */
export async function createCap(sql: Sql) {
  await sql`create table if not exists cap_challenges (
    token text primary key, data jsonb not null, expires bigint not null)`;
  await sql`create table if not exists cap_tokens (key text primary key, expires bigint not null)`;
  return new Cap({
    noFSState: true,
    storage: {
      challenges: {
        async store(token, data) {
          await sql`insert into cap_challenges (token, data, expires)
            values (${token}, ${sql.json(data.challenge)}, ${data.expires})`;
        },
        async read(token) {
          const [row] = await sql`delete from cap_challenges where token = ${token} returning data, expires`;
          return row ? { challenge: row.data, expires: Number(row.expires) } : null;
        },
        async delete() {},
        async deleteExpired() {
          await sql`delete from cap_challenges where expires < ${Date.now()}`;
        },
      },
      tokens: {
        async store(key, expires) {
          await sql`insert into cap_tokens (key, expires) values (${key}, ${expires})`;
        },
        async get(key) {
          const [row] = await sql`delete from cap_tokens where key = ${key} returning expires`;
          return row ? Number(row.expires) : null;
        },
        async delete() {},
        async deleteExpired() {
          await sql`delete from cap_tokens where expires < ${Date.now()}`;
        },
      },
    },
  });
}

/**
 * Cap derives each sub-challenge's salt and target from the challenge token: a 32-bit FNV-1a of a seed string
 * drives a xorshift32 generator whose outputs, as 8-digit hex, are concatenated and cut to length. The client
 * widget does the same to learn what to solve; the bench needs it to prepare solved challenges.
 */
function seededHex(seed: string, length: number): string {
  let state = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) state = Math.imul(state ^ seed.charCodeAt(i), 0x01000193);
  let out = '';
  while (out.length < length) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out += (state >>> 0).toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
}

/** The nonces solving a Cap challenge: for sub-challenge i (1-based), SHA-256(salt + n) in hex starts with the target. */
export function solveCap(token: string, challenge: { c: number; s: number; d: number }): number[] {
  const solutions: number[] = [];
  for (let i = 1; i <= challenge.c; i++) {
    const salt = seededHex(`${token}${i}`, challenge.s);
    const target = seededHex(`${token}${i}d`, challenge.d);
    let n = 0;
    while (!createHash('sha256').update(`${salt}${n}`).digest('hex').startsWith(target)) n++;
    solutions.push(n);
  }
  return solutions;
}

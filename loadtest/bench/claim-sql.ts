import { parseArgs } from 'node:util';
import type { Database } from '@gatehouse/core/db';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { CLAIM_SETTINGS, claimSql } from '../../api/src/tokens/pass-token-claims.ts';
import { median } from './ab-sides.ts';

/**
 * A lever for a fresh validation, measured on the statements alone: how much cheaper a claim written with
 * arrays and `UPDATE … RETURNING` would be for PostgreSQL than the API's (a jsonb batch, a CTE and a read
 * of every row; docs/decisions.md, "The hot path of a validation"). Both run prepared on one connection opened with the claim's settings, on a table of
 * `--rows` unconsumed tokens, alternately in rounds of `--batches` batches of `--size` fresh tokens; it
 * prints the round trip per batch (medians) and each one's `EXPLAIN ANALYZE` execution time. Nothing of the
 * API runs: this measures the statements alone, in a scratch database it drops at the end. Cheaper for
 * PostgreSQL is not faster for the request: a claim that wins here goes into the API only if the bench
 * (`npm run bench`) shows a fresh validation's throughput move.
 *   npx node loadtest/bench/claim-sql.ts [--rows 120000] [--size 10] [--batches 500] [--rounds 4]
 * TEST_POSTGRES_URL (else postgres://postgres@127.0.0.1:5432/postgres).
 */
const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '120000' },
    size: { type: 'string', default: '10' },
    batches: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '4' },
  },
});
const ROWS = Number(flags.rows);
const SIZE = Number(flags.size);
const BATCHES = Number(flags.batches);
const ROUNDS = Number(flags.rounds);

/** The candidate: fresh tokens claimed and returned by the UPDATE; the others would need a second read. */
const ARRAY_CLAIM = `update pass_tokens set consumed_at = now(), idempotency_key = x.key
  from unnest($1::text[], $2::text[], $3::text[]) as x(id, app, key)
  where pass_tokens.id = x.id and pass_tokens.app_id = x.app and pass_tokens.consumed_at is null
  returning pass_tokens.id, app_id, challenge_id, action, uid, captcha_args, consumed_at, idempotency_key, cdata`;

/**
 * The candidate in one round trip: the fresh rows from the UPDATE, and only the ids it did not claim read
 * (their rows as they were before the statement: a replay, another app's token, none).
 */
const ARRAY_CLAIM_ONE = `with x as (select * from unnest($1::text[], $2::text[], $3::text[]) as x(id, app, key)),
  c as (update pass_tokens set consumed_at = now(), idempotency_key = x.key from x
    where pass_tokens.id = x.id and pass_tokens.app_id = x.app and pass_tokens.consumed_at is null
    returning pass_tokens.*)
  select c.*, true as fresh from c
  union all
  select p.*, false from x join pass_tokens p on p.id = x.id where x.id not in (select id from c)`;

const base = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const name = `claim_sql_${process.pid}`;
const admin = postgres(base.toString(), { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, connection: { ...CLAIM_SETTINGS } });
try {
  // The columns of core/src/db/schema.ts's pass_tokens, with its primary key.
  await sql.unsafe(`create table pass_tokens (id text primary key, app_id text not null, challenge_id text not null,
    action text not null, uid text, captcha_args jsonb not null, issued_at timestamptz not null,
    expires_at timestamptz not null, consumed_at timestamptz, idempotency_key text, cdata text)`);
  await sql.unsafe(`insert into pass_tokens select 't' || g, 'app', 'c' || g, 'login', null,
    '{"user_ip":"203.0.113.7","risk_score":12,"risk_reasons":["a","b"]}'::jsonb, now(), now() + interval '1 hour',
    null, null, null from generate_series(1, ${ROWS}) g`);
  await sql.unsafe('analyze pass_tokens');
  // Today's statement as drizzle renders it (its parameter: the batch as JSON text).
  const jsonbClaim = claimSql(drizzle(sql) as unknown as Database);
  let next = 1;
  const fresh = () => Array.from({ length: SIZE }, () => `t${next++}`);
  const jsonb = (ids: string[]) =>
    sql.unsafe(jsonbClaim, [JSON.stringify(ids.map((id) => ({ id, app: 'app', key: null })))], {
      prepare: true,
    });
  /** The array claims' parameters for a batch: ids, apps, keys. */
  const arrayArgs = (ids: string[]) => [ids, ids.map(() => 'app'), ids.map(() => null)] as never;
  const arrays = (ids: string[]) => sql.unsafe(ARRAY_CLAIM, arrayArgs(ids), { prepare: true });
  const arraysOne = (ids: string[]) => sql.unsafe(ARRAY_CLAIM_ONE, arrayArgs(ids), { prepare: true });
  const checks = [await jsonb(fresh()), await arrays(fresh()), await arraysOne(fresh())].map(
    (rows) => rows.length,
  );
  if (checks.some((n) => n !== SIZE))
    throw new Error(`a batch of ${SIZE} claimed ${checks.join(' and ')} rows`);
  if (next + 3 * ROUNDS * BATCHES * SIZE > ROWS) throw new Error('--rows too small for the rounds asked');
  const roundTrip = async (claim: (ids: string[]) => Promise<unknown>) => {
    const started = performance.now();
    for (let i = 0; i < BATCHES; i++) await claim(fresh());
    return ((performance.now() - started) / BATCHES) * 1000;
  };
  const sides = { jsonb, arrays, arraysOne };
  const times = { jsonb: [] as number[], arrays: [] as number[], arraysOne: [] as number[] };
  const names = Object.keys(sides) as (keyof typeof sides)[];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const side of order) times[side].push(await roundTrip(sides[side]));
    console.log(
      `round ${round}: ${names.map((n) => `${n} ${Math.round(times[n].at(-1)!)} µs`).join(', ')} per batch of ${SIZE}`,
    );
  }
  const executed = async (text: string, values: unknown[]) => {
    const plan = await sql.unsafe(`explain (analyze, timing off, summary on) ${text}`, values as never);
    return plan.map((r) => String(r['QUERY PLAN'])).find((line) => line.startsWith('Execution Time')) ?? '?';
  };
  const ids = fresh();
  const more = fresh();
  console.log(
    `round trip per batch of ${SIZE} (medians of ${ROUNDS} rounds of ${BATCHES}): jsonb ${Math.round(median(times.jsonb))} µs, ` +
      `arrays ${Math.round(median(times.arrays))} µs (${(median(times.arrays) / median(times.jsonb)).toFixed(2)}×), ` +
      `arrays in one statement ${Math.round(median(times.arraysOne))} µs (${(median(times.arraysOne) / median(times.jsonb)).toFixed(2)}×)`,
  );
  console.log(
    `jsonb: ${await executed(jsonbClaim, [JSON.stringify(ids.map((id) => ({ id, app: 'app', key: null })))])}`,
  );
  console.log(`arrays: ${await executed(ARRAY_CLAIM, arrayArgs(more))}`);
  console.log(`arrays in one statement: ${await executed(ARRAY_CLAIM_ONE, arrayArgs(fresh()))}`);
} finally {
  await sql.end({ timeout: 1 });
  await admin.unsafe(`drop database if exists ${name}`);
  await admin.end({ timeout: 1 });
}

import { type Database, regional, regionalColumn, rowsOf } from '@gatehouse/core/db';
import { challengeAttempts, passTokens } from '@gatehouse/core/db/schema';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { PassTokenDraft } from '../tokens/pass-tokens.ts';

export type AttemptSlot = { ok: true; attempt: number } | { ok: false; why: 'solved' | 'exhausted' };

/**
 * Takes one submission slot for a challenge in one statement: the first submission creates its row with one
 * attempt; each later one increments `attempts` only while the challenge is unsolved and under
 * `maxAttempts`, so concurrent submissions can never exceed the bound. A refused slot costs a second,
 * indexed read to say why (solved or exhausted).
 */
export async function takeAttempt(
  db: Database,
  challenge: { id: string; app: string; exp: number },
  maxAttempts: number,
): Promise<AttemptSlot> {
  const [row] = await takeStatement(db).execute({
    id: challenge.id,
    app: challenge.app,
    expires: new Date(challenge.exp * 1000).toISOString(),
    max: maxAttempts,
  });
  if (row) return { ok: true, attempt: row.attempts };
  return refused(db, challenge.id);
}

/** Why a slot was refused: one indexed read, paid only by a submission that gets nothing. */
async function refused(db: Database, id: string): Promise<AttemptSlot> {
  const [state] = await db
    .select({ solvedAt: challengeAttempts.solvedAt })
    .from(challengeAttempts)
    .where(eq(challengeAttempts.id, id));
  return { ok: false, why: state?.solvedAt ? 'solved' : 'exhausted' };
}

/**
 * takeAttempt for a submission whose checks without a hash all passed, in the same one statement: the slot
 * is taken, the challenge marked solved and the pass token's row written, so a right submit costs one round
 * trip instead of three (at low rates each statement's write and wake-up costs the API more than the rest of
 * the request). The spot-checked hash runs after it, so a challenge still makes the server hash
 * at most once per slot; when that hash fails, `unsolve` takes it all back and burns the challenge. Until
 * then the token's row is unreachable: its id is random and the sealed token is sent only after the hash.
 */
export async function takeAndSolve(
  db: Database,
  challenge: { id: string; app: string; exp: number },
  maxAttempts: number,
  token: PassTokenDraft,
): Promise<AttemptSlot> {
  const { row } = token;
  const result: unknown = await takeAndSolveStatement(db).execute({
    id: challenge.id,
    app: challenge.app,
    expires: new Date(challenge.exp * 1000).toISOString(),
    max: maxAttempts,
    token: row.id,
    tokenApp: row.appId,
    action: row.action,
    uid: row.uid ?? null,
    cdata: row.cdata ?? null,
    args: JSON.stringify(row.captchaArgs),
    issued: row.issuedAt.toISOString(),
    tokenExpires: row.expiresAt.toISOString(),
  });
  const [taken] = rowsOf<{ attempts: number }>(result);
  if (taken) return { ok: true, attempt: taken.attempts };
  return refused(db, challenge.id);
}

/**
 * The statement behind takeAndSolve, built once per database. The CTE is takeAttempt's conditional upsert
 * that also sets `solved_at`; the pass token's row is inserted from its RETURNING, so it exists exactly when
 * the slot was taken. Hand-written SQL: drizzle 0.45 cannot build an INSERT … SELECT from a data-modifying
 * CTE; it is prepared through drizzle's session like its own builders' `prepare()`. The attempt count is read
 * by a SELECT over both CTEs, not by a subquery in RETURNING: CockroachDB has answered no rows for those
 * (cockroachdb/cockroach#105640), and a row here is what says the slot was taken.
 */
function prepareTakeAndSolve(db: Database) {
  const p = (name: string) => sql.placeholder(name);
  const attemptsRegion = regionalColumn(db, 'challenge_attempts');
  const tokensRegion = regionalColumn(db, 'pass_tokens');
  const query = sql`with slot as (
      insert into ${challengeAttempts} (id, app_id, attempts, expires_at, solved_at${attemptsRegion.column})
      values (${p('id')}::text, ${p('app')}::text, 1, ${p('expires')}::timestamptz, now()${attemptsRegion.value})
      on conflict (id) do update set attempts = ${challengeAttempts}.attempts + 1, solved_at = now()
      where ${challengeAttempts}.solved_at is null and ${challengeAttempts}.attempts < ${p('max')}::integer
      returning attempts
    ), token as (
      insert into ${passTokens} (id, app_id, challenge_id, action, uid, cdata, captcha_args, issued_at, expires_at${tokensRegion.column})
      select ${p('token')}::text, ${p('tokenApp')}::text, ${p('id')}::text, ${p('action')}::text, ${p('uid')}::text,
        ${p('cdata')}::text, ${p('args')}::jsonb, ${p('issued')}::timestamptz, ${p('tokenExpires')}::timestamptz${tokensRegion.value}
      from slot
      returning id
    )
    select slot.attempts from slot, token`;
  return db._.session.prepareQuery(
    new PgDialect().sqlToQuery(query),
    undefined,
    'gatehouse_take_and_solve',
    false,
  );
}

const takeAndSolveStatements = new WeakMap<Database, ReturnType<typeof prepareTakeAndSolve>>();

function takeAndSolveStatement(db: Database) {
  let statement = takeAndSolveStatements.get(db);
  if (!statement) {
    statement = prepareTakeAndSolve(db);
    takeAndSolveStatements.set(db, statement);
  }
  return statement;
}

/**
 * Takes back takeAndSolve after its spot check failed, in one statement: the pass token's row goes, and the
 * challenge is unsolved with every attempt spent (burned: a retry would be a cheater's free second draw).
 */
export async function unsolve(db: Database, id: string, tokenId: string, maxAttempts: number): Promise<void> {
  await db.execute(sql`with dropped as (delete from ${passTokens} where id = ${tokenId})
    update ${challengeAttempts} set solved_at = null, attempts = greatest(attempts, ${maxAttempts}::integer)
    where id = ${id}`);
}

/**
 * Every submission, right or wrong, takes its slot through this statement: prepared once per database, since
 * building it through the query builder on each submit costs more CPU than the rest of a wrong answer.
 */
function prepareTake(db: Database) {
  return db
    .insert(regional(db, challengeAttempts))
    .values({
      id: sql.placeholder('id'),
      appId: sql.placeholder('app'),
      attempts: 1,
      expiresAt: sql`${sql.placeholder('expires')}::timestamptz`,
    })
    .onConflictDoUpdate({
      target: challengeAttempts.id,
      set: { attempts: sql`${challengeAttempts.attempts} + 1` },
      setWhere: and(
        isNull(challengeAttempts.solvedAt),
        sql`${challengeAttempts.attempts} < ${sql.placeholder('max')}::integer`,
      ),
    })
    .returning({ attempts: challengeAttempts.attempts })
    .prepare('gatehouse_take_attempt');
}

const takeStatements = new WeakMap<Database, ReturnType<typeof prepareTake>>();

function takeStatement(db: Database) {
  let statement = takeStatements.get(db);
  if (!statement) {
    statement = prepareTake(db);
    takeStatements.set(db, statement);
  }
  return statement;
}

/**
 * Spends every remaining attempt of an unsolved challenge: after a proof-of-work failure, so a cheater never
 * gets a second draw of the spot check on the same solution.
 */
export async function burnChallenge(db: Database, id: string, maxAttempts: number): Promise<void> {
  await db
    .update(challengeAttempts)
    .set({ attempts: maxAttempts })
    .where(and(eq(challengeAttempts.id, id), isNull(challengeAttempts.solvedAt)));
}

/** Deletes rows of challenges that expired more than an hour ago. */
export async function purgeExpiredAttempts(db: Database): Promise<void> {
  await db.delete(challengeAttempts).where(sql`${challengeAttempts.expiresAt} < now() - interval '1 hour'`);
}

/** A challenge's submissions so far and whether it is solved; undefined before its first submission. */
export async function attemptState(
  db: Database,
  id: string,
): Promise<{ attempts: number; solved: boolean } | undefined> {
  const [row] = await db
    .select({ attempts: challengeAttempts.attempts, solvedAt: challengeAttempts.solvedAt })
    .from(challengeAttempts)
    .where(eq(challengeAttempts.id, id));
  return row && { attempts: row.attempts, solved: row.solvedAt !== null };
}

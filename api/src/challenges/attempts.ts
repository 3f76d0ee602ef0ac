import { type Database, regional } from '@gatehouse/core/db';
import { challengeAttempts } from '@gatehouse/core/db/schema';
import { and, eq, isNull, sql } from 'drizzle-orm';

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
  const [state] = await db
    .select({ solvedAt: challengeAttempts.solvedAt })
    .from(challengeAttempts)
    .where(eq(challengeAttempts.id, challenge.id));
  return { ok: false, why: state?.solvedAt ? 'solved' : 'exhausted' };
}

/**
 * Every submission, right or wrong, takes its slot through this statement: prepared once per database, since
 * building it through the query builder on each submit cost more CPU than the rest of a wrong answer (issue 14).
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

/** Marks a challenge solved; false when a concurrent submission solved it first (one pass token per challenge). */
export async function markSolved(db: Database, id: string): Promise<boolean> {
  const rows = await db
    .update(challengeAttempts)
    .set({ solvedAt: sql`now()` })
    .where(and(eq(challengeAttempts.id, id), isNull(challengeAttempts.solvedAt)))
    .returning({ id: challengeAttempts.id });
  return rows.length === 1;
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

import type { Database } from '@gatehouse/core/db';
import { passTokens } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { nativeHasher, type Puzzle, parsePuzzle, solvePuzzle } from '@gatehouse/core/pow';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meetsTarget, nonceBytes } from '../../core/src/pow/encoding.ts';
import { type SubmitBody, submitChallenge } from '../src/challenges/submit.ts';
import type { Deps } from '../src/deps.ts';
import { DESKTOP_CHROME, DESKTOP_SIGNALS, databaseAvailable, startTestApi, type TestApi } from './harness.ts';

const run = await databaseAvailable();

/**
 * Database round trips per submission, by outcome (each statement's write and wake-up costs the API more CPU
 * than anything else but the hash). Counted where every statement
 * goes out: the prepared query's execute, through a database whose session is wrapped, so statements built
 * by drizzle's query builder and the hand-prepared ones count alike.
 */
function counting(real: Database, executed: string[]): Database {
  let session: object | undefined;
  const wrapSession = (inner: object) => {
    session ??= new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'prepareQuery' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const prepared = value.apply(receiver, args);
          for (const method of ['execute', 'all'] as const) {
            const original = prepared[method]?.bind(prepared);
            if (original) {
              prepared[method] = (...a: unknown[]) => {
                executed.push(
                  String((args[0] as { sql: string }).sql)
                    .trim()
                    .split(/\s+/)[0]!,
                );
                return original(...a);
              };
            }
          }
          return prepared;
        };
      },
    });
    return session;
  };
  return new Proxy(real, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === 'session') return wrapSession(value);
      if (key === '_') return { ...value, session: wrapSession(value.session) };
      return value;
    },
  });
}

describe.runIf(run)('submission cost in database statements', () => {
  let api: TestApi;
  let deps: Deps;
  const executed: string[] = [];
  beforeAll(async () => {
    api = await startTestApi();
    deps = { ...api.runtime, db: counting(api.runtime.db, executed) };
  });
  afterAll(() => api?.close());

  async function challenge(settings: object): Promise<{ body: SubmitBody; puzzle: Puzzle }> {
    const created = await api.createApp({ name: 'submit-cost', ...settings });
    const res = await api.post(
      '/v1/challenge/init',
      { app_key: created.appKey, action: 'login', signals: DESKTOP_SIGNALS },
      DESKTOP_CHROME,
    );
    const { challenge_id, challenge, pow } = res.body.data;
    return { body: { app_key: created.appKey, challenge_id, challenge }, puzzle: pow };
  }

  const outcome = (promise: Promise<unknown>) =>
    promise.then(
      () => 'passed',
      (error) => (error instanceof GatehouseError ? error.code : Promise.reject(error)),
    );

  it('a right submit is one statement (slot, solved and pass token together); a replay two, and no pass', async () => {
    // The first submit on this database prepares the statements: count from the second on.
    const first = await challenge({ test_mode: true });
    expect(
      await outcome(submitChallenge(deps, { ...first.body, pow: await solvePuzzle(first.puzzle) })),
    ).toBe('passed');
    const { body, puzzle } = await challenge({ test_mode: true });
    const right = { ...body, pow: await solvePuzzle(puzzle) };
    executed.length = 0;
    const passed = await submitChallenge(deps, right);
    expect(executed).toEqual(['with']);
    expect(passed.pass_token).toMatch(/^pt_/);

    executed.length = 0;
    expect(await outcome(submitChallenge(deps, right))).toBe('challenge_not_found');
    expect(executed).toHaveLength(2);
  });

  it('a malformed proof-of-work is one statement, and no hash', async () => {
    const { body } = await challenge({ test_mode: true });
    executed.length = 0;
    expect(await outcome(submitChallenge(deps, { ...body, pow: { nonces: [] } }))).toBe('invalid_answer');
    expect(executed).toHaveLength(1);
  });

  it('a failed spot check takes the solve back: two statements, the challenge burned, no pass token row left', async () => {
    const { body, puzzle } = await challenge({ risk_policy: { invisible_below: 101, image_below: 101 } });
    // Nonces that all miss the target, still ascending: the one spot-checked sub-puzzle always fails.
    const salt = parsePuzzle(puzzle)!.salt;
    const nonces: number[] = [];
    for (let n = 0; nonces.length < puzzle.count; n++) {
      if (!meetsTarget(await nativeHasher()!(nonceBytes(n), salt, puzzle), puzzle.target)) nonces.push(n);
    }
    executed.length = 0;
    // Each with a made-up hash prefix (eight zero bytes, which meet any target): well formed, so only the hash
    // refuses it.
    const hashes = nonces.map(() => 'AAAAAAAAAAA');
    expect(await outcome(submitChallenge(deps, { ...body, pow: { nonces, hashes } }))).toBe('invalid_answer');
    expect(executed).toHaveLength(2);
    const rows = await api.runtime.db
      .select({ id: passTokens.id })
      .from(passTokens)
      .where(eq(passTokens.challengeId, body.challenge_id));
    expect(rows).toEqual([]);
    // Burned, not solved: the full solution is refused as a spent challenge.
    const honest = await solvePuzzle(puzzle, { hasher: nativeHasher() });
    expect(await outcome(submitChallenge(deps, { ...body, pow: honest }))).toBe('challenge_expired');
  });
});

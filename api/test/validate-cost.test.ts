import type { Database } from '@gatehouse/core/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passTokenClaims } from '../src/tokens/pass-token-claims.ts';
import { validatePassToken } from '../src/tokens/pass-tokens.ts';
import {
  databaseAvailable,
  mintLoginToken,
  startTestApi,
  TEST_DATABASE,
  type TestApi,
  verdictOf,
} from './harness.ts';

const run = await databaseAvailable();

/**
 * The database work a validation costs, by verdict: an attacker's replays and forgeries must not cost more
 * than an honest validation. Counted as calls into the query builder: after the first validation
 * prepared the claim statement, each validation should build no query at all (the prepared statement runs).
 */
describe.runIf(run)('validation cost by verdict', () => {
  let api: TestApi;
  let built: string[];
  let db: Database;
  beforeAll(async () => {
    api = await startTestApi();
    // The API's own database object, its methods wrapped in place to record each call: the claim batcher is
    // found by the object's identity (one per database, with its side pool on PostgreSQL), so a proxy would
    // measure another batcher than the API's.
    db = api.runtime.db;
    built = [];
    const target = db as unknown as Record<string, unknown>;
    for (const key of [
      'select',
      'selectDistinct',
      'insert',
      'update',
      'delete',
      'execute',
      'with',
      'transaction',
    ]) {
      const original = target[key];
      if (typeof original !== 'function') continue;
      target[key] = (...args: unknown[]) => {
        built.push(key);
        return original.apply(db, args);
      };
    }
  });
  afterAll(() => api?.close());

  async function token(appId: string) {
    const app = (await api.runtime.apps.findById(appId))!;
    return { app, minted: await mintLoginToken(api, appId, 'ch_cost') };
  }

  it('fresh, replayed and forged tokens: no query built per validation, and a forgery touches no database', async () => {
    const created = await api.createApp({ name: 'cost' });
    const { app, minted } = await token(created.appId);
    // The first validation on this database prepares the statement; measure from the second token on.
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, minted))).toBe('valid');
    // On PostgreSQL the claim runs prepared on its own connections; elsewhere unnamed (pass-token-claims.ts).
    expect(await passTokenClaims(db).mode()).toBe(TEST_DATABASE === 'postgres' ? 'prepared' : 'unnamed');
    const second = await token(created.appId);

    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, second.minted))).toBe('valid');
    expect(built).toEqual([]);

    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, second.minted))).toBe(
      'token_already_used',
    );
    expect(built).toEqual([]);

    const forged = `${second.minted.slice(0, -4)}AAAA`;
    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, forged))).toBe('token_not_found');
    expect(built).toEqual([]);

    // The recorder sees what the database object builds: keep_token reads the row with a query of its own.
    const third = await token(created.appId);
    built.length = 0;
    expect(
      await verdictOf(validatePassToken(db, api.runtime.keys, app, third.minted, { keepToken: true })),
    ).toBe('valid');
    expect(built).toEqual(['select']);
  });

  it('a replay with the same idempotency key shortly after is the same verdict, still one statement', async () => {
    const created = await api.createApp({ name: 'cost-retry' });
    const { app, minted } = await token(created.appId);
    const options = { idempotencyKey: 'retry-1' };
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, minted, options))).toBe('valid');
    built.length = 0;
    expect(await verdictOf(validatePassToken(db, api.runtime.keys, app, minted, options))).toBe('valid');
    expect(
      await verdictOf(validatePassToken(db, api.runtime.keys, app, minted, { idempotencyKey: 'x' })),
    ).toBe('token_already_used');
    expect(built).toEqual([]);
  });
});

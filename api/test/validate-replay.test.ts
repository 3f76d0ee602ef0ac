import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { bootstrap, type Runtime } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { ClaimMemory, passTokenClaims } from '../src/tokens/pass-token-claims.ts';
import {
  databaseAvailable,
  type Json,
  mintLoginToken,
  NO_AUTH_THROTTLE,
  postJson,
  startTestApi,
  TEST_DATABASE,
  type TestApi,
} from './harness.ts';

const run = await databaseAvailable();

type Creds = { appKey: string; appSecret: string; appId: string };
const auth = (c: Creds) => ({ 'X-App-Key': c.appKey, 'X-App-Secret': c.appSecret });

/** The verdict of an answer from /v1/validate: 'valid' or its error code. */
function verdict(res: { status: number; body: Json }): string {
  expect(res.status).toBe(200);
  return res.body.data.valid === true ? 'valid' : res.body.error;
}

/**
 * Holds the database busy (a transaction holding an exclusive lock on pass_tokens; on PGlite, whose one
 * connection a transaction owns, any statement at all) until `release()`: a request answered meanwhile did
 * no work on pass_tokens.
 */
async function holdDatabase(db: Runtime['db']): Promise<{ release: () => Promise<void> }> {
  let release = () => {};
  let held = () => {};
  const taken = new Promise<void>((resolve) => {
    held = resolve;
  });
  const done = db.transaction(async (tx) => {
    await tx.execute(sql`lock table pass_tokens in access exclusive mode`);
    held();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  await taken;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

/** `promise`'s value if it settles within `ms`, else 'still waiting'. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([
    promise,
    new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms)),
  ]);
}

/**
 * A replayed or forged token must cost less than a fresh validation. A token this process claimed
 * is remembered (bounded, until it expires), so its replay is answered without a database round trip; the
 * database stays the single source of truth across processes: a token claimed elsewhere still goes to it,
 * and a same-key retry still gets the original verdict from it.
 */
describe.runIf(run)('replays and forgeries at /v1/validate', () => {
  let api: TestApi;
  let shop: Creds;
  beforeAll(async () => {
    api = await startTestApi();
    shop = await api.createApp({ name: 'replay-shop' });
  });
  afterAll(() => api?.close());

  const validate = (body: Json, creds = shop) => api.post('/v1/validate', body, auth(creds));
  const statements = () => passTokenClaims(api.runtime.db).stats.statements;

  it('a replay of a token this process validated: token_already_used, with no claiming statement', async () => {
    const token = await mintLoginToken(api, shop.appId, 'ch_replay_1');
    expect(verdict(await validate({ pass_token: token }))).toBe('valid');
    const before = statements();
    for (let i = 0; i < 5; i++)
      expect(verdict(await validate({ pass_token: token }))).toBe('token_already_used');
    expect(statements()).toBe(before);
  });

  it('a replay and a forgery are answered while pass_tokens is locked; a fresh token waits for it', async () => {
    const used = await mintLoginToken(api, shop.appId, 'ch_replay_2');
    const fresh = await mintLoginToken(api, shop.appId, 'ch_replay_3');
    expect(verdict(await validate({ pass_token: used }))).toBe('valid');
    const forged = `${fresh.slice(0, -4)}${fresh.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const hold = await holdDatabase(api.runtime.db);
    try {
      const replay = await within(validate({ pass_token: used }), 5_000);
      const forgery = await within(validate({ pass_token: forged }), 5_000);
      // keep_token reads the row otherwise: a token claimed here is known spent.
      const kept = await within(validate({ pass_token: used, keep_token: true }), 5_000);
      expect(replay === 'still waiting' ? replay : verdict(replay)).toBe('token_already_used');
      expect(forgery === 'still waiting' ? forgery : verdict(forgery)).toBe('token_not_found');
      expect(kept === 'still waiting' ? kept : verdict(kept)).toBe('token_already_used');
      // The check itself: a fresh token does need the table, and waits for the lock.
      const pending = validate({ pass_token: fresh });
      expect(await within(pending, 500)).toBe('still waiting');
      await hold.release();
      expect(verdict(await pending)).toBe('valid');
    } finally {
      await hold.release();
    }
  });

  it('a same-key retry still gets the original verdict; another key or none is a replay', async () => {
    const token = await mintLoginToken(api, shop.appId, 'ch_replay_4');
    const first = await validate({ pass_token: token, idempotency_key: 'order-7' });
    expect(verdict(first)).toBe('valid');
    const retry = await validate({ pass_token: token, idempotency_key: 'order-7' });
    expect(retry.body).toEqual(first.body);
    const before = statements();
    expect(verdict(await validate({ pass_token: token, idempotency_key: 'order-8' }))).toBe(
      'token_already_used',
    );
    expect(verdict(await validate({ pass_token: token }))).toBe('token_already_used');
    expect(statements()).toBe(before);
    expect((await validate({ pass_token: token, idempotency_key: 'order-7' })).body).toEqual(first.body);
  });

  it('a token claimed without a key: a retry that brings one is a replay', async () => {
    const token = await mintLoginToken(api, shop.appId, 'ch_replay_5');
    expect(verdict(await validate({ pass_token: token }))).toBe('valid');
    expect(verdict(await validate({ pass_token: token, idempotency_key: 'late' }))).toBe(
      'token_already_used',
    );
  });

  it('a token of this app presented by another app is not found, and stays valid for its own', async () => {
    const other = await api.createApp({ name: 'replay-other' });
    const token = await mintLoginToken(api, shop.appId, 'ch_replay_6');
    expect(verdict(await validate({ pass_token: token }, other))).toBe('token_not_found');
    expect(verdict(await validate({ pass_token: token }))).toBe('valid');
    expect(verdict(await validate({ pass_token: token }, other))).toBe('token_not_found');
  });
});

/**
 * Two API instances on one PostgreSQL database, each with its own claims and memory (as two processes): a
 * token one claimed is a replay at the other, which asks the database; a same-key retry at the other gets the
 * original verdict. PGlite is one process's embedded database, so there is no second instance to run there.
 */
describe.runIf(run && TEST_DATABASE === 'postgres')('two API instances on one database', () => {
  let a: TestApi;
  let b: { url: string; runtime: Runtime; close: () => Promise<void> };
  let shop: Creds;
  beforeAll(async () => {
    a = await startTestApi();
    const config = loadConfig({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'gatehouse-test-')),
      PORT: '0',
      LOG_LEVEL: 'silent',
      ...NO_AUTH_THROTTLE,
      DATABASE_URL: a.config.databaseUrl!,
    });
    const runtime = await bootstrap(config, pino({ level: 'silent' }));
    const server = createApp(runtime).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    b = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      runtime,
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await runtime.close();
      },
    };
    shop = await a.createApp({ name: 'two-instances' });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const at = (url: string, body: Json) => postJson(`${url}/v1/validate`, body, auth(shop));

  it('B sees a token A claimed (through the database), and A one B claimed', async () => {
    expect(passTokenClaims(b.runtime.db)).not.toBe(passTokenClaims(a.runtime.db));
    const first = await mintLoginToken(a, shop.appId, 'ch_two_1');
    expect(verdict(await at(a.url, { pass_token: first }))).toBe('valid');
    const bBefore = passTokenClaims(b.runtime.db).stats.statements;
    expect(verdict(await at(b.url, { pass_token: first }))).toBe('token_already_used');
    expect(passTokenClaims(b.runtime.db).stats.statements).toBe(bBefore + 1);

    const second = await mintLoginToken(a, shop.appId, 'ch_two_2');
    expect(verdict(await at(b.url, { pass_token: second }))).toBe('valid');
    expect(verdict(await at(a.url, { pass_token: second }))).toBe('token_already_used');
    expect(verdict(await at(b.url, { pass_token: second }))).toBe('token_already_used');
  });

  it('a same-key retry at the other instance gets the original verdict', async () => {
    const token = await mintLoginToken(a, shop.appId, 'ch_two_3');
    const first = await at(a.url, { pass_token: token, idempotency_key: 'pay-1' });
    expect(verdict(first)).toBe('valid');
    expect((await at(b.url, { pass_token: token, idempotency_key: 'pay-1' })).body).toEqual(first.body);
    expect(verdict(await at(b.url, { pass_token: token, idempotency_key: 'pay-2' }))).toBe(
      'token_already_used',
    );
  });

  it('the same token sent to both at once: exactly one valid verdict', async () => {
    for (let i = 0; i < 10; i++) {
      const token = await mintLoginToken(a, shop.appId, `ch_two_race_${i}`);
      const verdicts = await Promise.all([
        at(a.url, { pass_token: token }),
        at(b.url, { pass_token: token }),
        at(a.url, { pass_token: token }),
        at(b.url, { pass_token: token }),
      ]);
      expect(verdicts.map(verdict).toSorted()).toEqual([
        'token_already_used',
        'token_already_used',
        'token_already_used',
        'valid',
      ]);
    }
  });
});

/**
 * The memory of claimed tokens, alone: bounded by its capacity whatever is remembered, never recalls a token
 * it was not told of or one past its expiry, and recalls every unexpired one among the last `capacity`.
 */
describe('ClaimMemory', () => {
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('remember' as const),
      ttl: fc.integer({ min: -5, max: 30 }),
      key: fc.option(fc.constantFrom('k1', 'k2'), { nil: null }),
    }),
    fc.record({ kind: fc.constant('tick' as const), seconds: fc.integer({ min: 0, max: 10 }) }),
  );

  it('stays within its capacity and recalls exactly what it should', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(op, { maxLength: 200 }), (capacity, ops) => {
        const memory = new ClaimMemory(capacity);
        let now = 1_000_000;
        /** What was remembered (each token once, as claims are), oldest first: [id, exp, key]. */
        const told: [string, number, string | null][] = [];
        for (const o of ops) {
          if (o.kind === 'tick') now += o.seconds;
          else {
            const id = `t${told.length}`;
            memory.remember(id, now + o.ttl, o.key, now * 1000);
            told.push([id, now + o.ttl, o.key]);
          }
          expect(memory.size).toBeLessThanOrEqual(capacity);
          const recent = new Set(told.slice(-capacity).map(([id]) => id));
          for (const [id, exp, key] of told) {
            const recalled = memory.recall(id, now * 1000);
            if (exp <= now) expect(recalled).toBeUndefined();
            else if (recent.has(id)) expect(recalled).toEqual({ key });
            else if (recalled) expect(recalled).toEqual({ key });
          }
          expect(memory.recall(`t${told.length}`, now * 1000)).toBeUndefined();
          expect(memory.recall('never', now * 1000)).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('told a token again, updates its key in place', () => {
    const memory = new ClaimMemory(2);
    memory.remember('a', 1_000, null, 0);
    memory.remember('a', 1_000, 'k', 0);
    expect(memory.size).toBe(1);
    expect(memory.recall('a', 0)).toEqual({ key: 'k' });
  });

  it('when full, an expired token at the head makes room before the oldest unexpired one is dropped', () => {
    const memory = new ClaimMemory(3);
    memory.remember('old', 100, null, 50_000);
    memory.remember('a', 1_000, null, 50_000);
    memory.remember('b', 1_000, null, 50_000);
    // At t=200 s 'old' has expired: making room for 'c' drops it, not 'a'.
    memory.remember('c', 1_000, 'k', 200_000);
    expect(memory.size).toBe(3);
    expect(memory.recall('a', 200_000)).toEqual({ key: null });
    expect(memory.recall('c', 200_000)).toEqual({ key: 'k' });
    memory.remember('d', 1_000, null, 200_000);
    expect(memory.recall('a', 200_000)).toBeUndefined();
    expect(memory.recall('b', 200_000)).toEqual({ key: null });
  });
});

import { type Database, sidePool } from '@gatehouse/core/db';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_SETTINGS, claimSql, MAX_IN_FLIGHT, PassTokenClaims } from '../src/tokens/pass-token-claims.ts';
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
 * Validations arriving in the same event-loop turn share one claiming statement. Single use must
 * hold inside a batch as across batches: the same token twice in one turn, replays beside fresh tokens, a
 * same-key retry and a token presented for another app, all started before any of them is answered.
 */
describe.runIf(run)('validations claimed in batches', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  async function mint(appId: string, count: number) {
    const app = (await api.runtime.apps.findById(appId))!;
    const tokens = await Promise.all(
      Array.from({ length: count }, (_, i) => mintLoginToken(api, appId, `ch_batch_${i}`)),
    );
    return { app, tokens };
  }

  function tally(verdicts: string[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const v of verdicts) counts[v] = (counts[v] ?? 0) + 1;
    return counts;
  }

  it('one token validated 50 times in one turn: exactly one valid verdict', async () => {
    const { appId } = await api.createApp({ name: 'batch-same' });
    const { app, tokens } = await mint(appId, 1);
    const verdicts = await Promise.all(
      Array.from({ length: 50 }, () =>
        verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, app, tokens[0]!)),
      ),
    );
    expect(tally(verdicts)).toEqual({ valid: 1, token_already_used: 49 });
  });

  it('300 fresh tokens (more than one statement holds) each sent twice in one turn: each valid once', async () => {
    const { appId } = await api.createApp({ name: 'batch-many' });
    const { app, tokens } = await mint(appId, 300);
    const sent = [...tokens, ...tokens.toReversed()];
    const verdicts = await Promise.all(
      sent.map((token) => verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, app, token))),
    );
    expect(tally(verdicts)).toEqual({ valid: 300, token_already_used: 300 });
    const perToken = new Map<string, string[]>();
    for (const [i, token] of sent.entries())
      perToken.set(token, [...(perToken.get(token) ?? []), verdicts[i]!]);
    for (const pair of perToken.values()) expect(pair.toSorted()).toEqual(['token_already_used', 'valid']);
    // Every one is spent now: a later turn sees replays only.
    const again = await Promise.all(
      tokens.slice(0, 20).map((t) => verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, app, t))),
    );
    expect(tally(again)).toEqual({ token_already_used: 20 });
  });

  // PostgreSQL only: PGlite runs in this process and answers a statement before the next turn, so there no
  // statement is ever in flight when the next claim arrives (each goes alone, as it should).
  it.runIf(TEST_DATABASE === 'postgres')(
    'claims that arrive in later turns while a statement runs go together in the next one (group commit)',
    async () => {
      const { appId } = await api.createApp({ name: 'batch-group' });
      const { app, tokens } = await mint(appId, 20);
      const claims = new PassTokenClaims(api.runtime.db);
      // The statements are held in flight by a lock that blocks their UPDATE (another connection's SHARE lock
      // on pass_tokens), so the test does not depend on how fast a loaded database answers between turns.
      let release = () => {};
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = api.runtime.db.transaction(async (tx) => {
        await tx.execute(sql`lock table pass_tokens in share mode`);
        locked();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await lockTaken;
      const pending: Promise<unknown>[] = [];
      for (const token of tokens) {
        pending.push(claims.claim(api.runtime.keys.openPass(token)!.id, app.id, null));
        // Each claim in a turn of its own, as requests on separate connections arrive.
        await new Promise((resolve) => setImmediate(resolve));
      }
      release();
      await holder;
      const rows = (await Promise.all(pending)) as { fresh: boolean }[];
      expect(rows.every((row) => row.fresh)).toBe(true);
      // The first MAX_IN_FLIGHT claims alone, then those that arrived while they were held together in the
      // next statement (a statement per turn was 20).
      expect(claims.stats).toMatchObject({ claims: 20 });
      expect(claims.stats.statements).toBe(MAX_IN_FLIGHT + 1);
    },
  );

  it('a same-key retry in a later turn, while the first claim is in flight, gets the same verdict', async () => {
    const { appId } = await api.createApp({ name: 'batch-retry-later' });
    const { app, tokens } = await mint(appId, 1);
    const check = () =>
      verdictOf(
        validatePassToken(api.runtime.db, api.runtime.keys, app, tokens[0]!, { idempotencyKey: 'k' }),
      );
    const first = check();
    await new Promise((resolve) => setImmediate(resolve));
    // Sent beside the first, it would read the row from before the first committed and see a replay.
    expect(await Promise.all([first, check()])).toEqual(['valid', 'valid']);
  });

  it('a same-key retry in the same turn gets the same verdict; another key does not', async () => {
    const { appId } = await api.createApp({ name: 'batch-retry' });
    const { app, tokens } = await mint(appId, 1);
    const token = tokens[0]!;
    const check = (idempotencyKey: string) =>
      verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, app, token, { idempotencyKey }));
    const verdicts = await Promise.all([check('k1'), check('k1'), check('k2')]);
    // The first k1 claims it; the second (held for the next statement) is its retry; k2 is a replay.
    expect(verdicts).toEqual(['valid', 'valid', 'token_already_used']);
  });

  it("a token presented for another app in the same turn as its own app's validation: refused, and spends nothing", async () => {
    const owner = await api.createApp({ name: 'batch-owner' });
    const other = await api.createApp({ name: 'batch-other' });
    const { app, tokens } = await mint(owner.appId, 2);
    const otherApp = (await api.runtime.apps.findById(other.appId))!;
    // The MAC binds the token to its app: validating it for another app never reaches the claim. The
    // batched statement checks the app too, for a row whose id is shared: same turn, both apps.
    const verdicts = await Promise.all([
      verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, otherApp, tokens[0]!)),
      verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, app, tokens[1]!)),
    ]);
    expect(verdicts).toEqual(['token_not_found', 'valid']);
    expect(await verdictOf(validatePassToken(api.runtime.db, api.runtime.keys, app, tokens[0]!))).toBe(
      'valid',
    );
  });
});

/**
 * On PostgreSQL the batched claim is prepared once per connection, on the batcher's own connections whose
 * session settings (CLAIM_SETTINGS) leave the planner no plan but a primary-key probe per claim: a generic
 * plan made while pass_tokens was small must still probe it once the table has grown. Without those settings
 * the same generic plan scans the table (the control), which is why the claim was sent unnamed before.
 */
describe.runIf(run && TEST_DATABASE === 'postgres')('the prepared claim on a table that grew', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  /** The generic plan PostgreSQL makes for the claim's text, on `db`'s connection, for a batch of 8. */
  async function genericPlan(db: Database, appId: string, prefix: string): Promise<string> {
    const batch = JSON.stringify(
      Array.from({ length: 8 }, (_, i) => ({ id: `${prefix}_${i + 1}`, app: appId, key: null })),
    );
    return db.transaction(async (tx) => {
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      await tx.execute(sql.raw(`prepare claim_plan_probe(jsonb) as ${claimSql(db)}`));
      try {
        const rows = (await tx.execute(
          sql.raw(`explain execute claim_plan_probe('${batch}')`),
        )) as unknown as { 'QUERY PLAN': string }[];
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await tx.execute(sql.raw('deallocate claim_plan_probe'));
      }
    });
  }

  it('is prepared, and its generic plan probes the primary key at 10 rows and at 200,000 rows', async () => {
    const db = api.runtime.db;
    const claims = new PassTokenClaims(db);
    expect(await claims.mode()).toBe('prepared');
    // The connections the batcher sends its statements on (the same side pool: one per database).
    const side = sidePool(db, 'pass-token-claims', MAX_IN_FLIGHT, CLAIM_SETTINGS)!;
    const [setting] = (await side.execute(sql`show enable_seqscan`)) as unknown as {
      enable_seqscan: string;
    }[];
    expect(setting?.enable_seqscan).toBe('off');

    await db.execute(sql`alter table pass_tokens set (autovacuum_enabled = false)`);
    await db.execute(sql`delete from pass_tokens`);
    const { appId } = await api.createApp({ name: 'prepared-plan' });
    await db.execute(sql`
      insert into pass_tokens (id, app_id, challenge_id, action, captcha_args, issued_at, expires_at)
      select 'small_' || g, ${appId}, 'ch_small', 'login', '{}'::jsonb, now(), now() + interval '1 hour'
      from generate_series(1, 10) g`);
    await db.execute(sql`analyze pass_tokens`);
    const small = await genericPlan(side, appId, 'small');
    expect(small).toContain('Index Scan using pass_tokens_pkey');
    expect(small).not.toMatch(/Seq Scan on pass_tokens/);
    // The control: the same generic plan on an ordinary connection scans the small table.
    expect(await genericPlan(db, appId, 'small')).toMatch(/Seq Scan on pass_tokens/);

    await db.execute(sql`
      insert into pass_tokens (id, app_id, challenge_id, action, captcha_args, issued_at, expires_at)
      select 'grown_' || g, ${appId}, 'ch_grown', 'login', '{}'::jsonb, now(), now() + interval '1 hour'
      from generate_series(1, 200000) g`);
    await db.execute(sql`analyze pass_tokens`);
    const grown = await genericPlan(side, appId, 'grown');
    expect(grown).toContain('Index Scan using pass_tokens_pkey');
    expect(grown).not.toMatch(/Seq Scan on pass_tokens/);

    // And the statement itself, run more than the five times after which PostgreSQL may switch to its generic
    // plan, on a table that grew 20,000-fold since it was last analyzed: each claim claims its own row.
    await db.execute(sql`delete from pass_tokens where id like 'grown_%'`);
    await db.execute(sql`analyze pass_tokens`);
    for (let i = 1; i <= 8; i++) {
      const row = await claims.claim(`small_${i}`, appId, null);
      expect(row).toMatchObject({ id: `small_${i}`, fresh: true });
    }
    await db.execute(sql`
      insert into pass_tokens (id, app_id, challenge_id, action, captcha_args, issued_at, expires_at)
      select 'grown_' || g, ${appId}, 'ch_grown', 'login', '{}'::jsonb, now(), now() + interval '1 hour'
      from generate_series(1, 200000) g`);
    const rows = await Promise.all([
      claims.claim('grown_7', appId, 'k'),
      claims.claim('small_1', appId, null),
      claims.claim('grown_199999', 'app_other', null),
    ]);
    expect(rows.map((r) => r && { id: r.id, fresh: r.fresh, key: r.idempotencyKey })).toEqual([
      { id: 'grown_7', fresh: true, key: null },
      { id: 'small_1', fresh: false, key: null },
      { id: 'grown_199999', fresh: false, key: null },
    ]);
    expect(rows[1]!.consumedAt).toBeInstanceOf(Date);
  });
});

/**
 * The unnamed claim (CockroachDB, PGlite) is planned for the table as it is, and a batch of a handful of
 * claims must probe pass_tokens' primary key, not scan the table: PostgreSQL's plan for the statement's
 * text, on a table that grew from a few rows to 30,000 since it was last analyzed.
 */
describe.runIf(run && TEST_DATABASE === 'postgres')('the batched claim on a table that grew', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('probes the primary key for each claim, with no sequential scan of pass_tokens', async () => {
    const db = api.runtime.db;
    await db.execute(sql`alter table pass_tokens set (autovacuum_enabled = false)`);
    const { appId } = await api.createApp({ name: 'batch-plan' });
    await db.execute(sql`
      insert into pass_tokens (id, app_id, challenge_id, action, captcha_args, issued_at, expires_at)
      select 'small_' || g, ${appId}, 'ch_small', 'login', '{}'::jsonb, now(), now() + interval '1 hour'
      from generate_series(1, 30) g`);
    await db.execute(sql`analyze pass_tokens`);
    await db.execute(sql`
      insert into pass_tokens (id, app_id, challenge_id, action, captcha_args, issued_at, expires_at)
      select 'grown_' || g, ${appId}, 'ch_grown', 'login', '{}'::jsonb, now(), now() + interval '1 hour'
      from generate_series(1, 30000) g`);
    const batch = JSON.stringify(
      Array.from({ length: 8 }, (_, i) => ({ id: `grown_${i + 1}`, app: appId, key: null })),
    );
    const text = claimSql(db).replace('$1', `'${batch}'`);
    const rows = (await db.execute(sql.raw(`explain ${text}`))) as unknown as { 'QUERY PLAN': string }[];
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toContain('Index Scan using pass_tokens_pkey');
    expect(plan).not.toMatch(/Seq Scan on pass_tokens/);
  });
});

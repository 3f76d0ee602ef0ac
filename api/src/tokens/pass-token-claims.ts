import { type Database, rowsOf, sidePool } from '@gatehouse/core/db';
import { passTokens } from '@gatehouse/core/db/schema';
import { and, eq, getTableColumns, isNull, sql } from 'drizzle-orm';

/** A pass token's row as the claim read it (before the statement), and whether this claim consumed it. */
export type ClaimedRow = typeof passTokens.$inferSelect & { fresh: boolean };

/** At most this many claims in one statement; the rest go in the next one. */
const MAX_BATCH = 256;
/**
 * At most this many claiming statements in flight per process (and the claim's side pool on PostgreSQL has
 * as many connections). One alone would make throughput the batch size over one statement's round trip,
 * which a busy PostgreSQL stretches to milliseconds. With the claim prepared (one round trip, a cached
 * plan), two overlap one statement's round trip with the next batch while keeping batches large, so fewer
 * statements, socket writes and wake-ups per claim than more statements in flight would make.
 */
export const MAX_IN_FLIGHT = 2;

/**
 * The claim of many tokens in one statement, built once per database. The CTE's UPDATE claims every
 * unconsumed token of the batch whose app matches; the outer SELECT reads each row as it was before the
 * statement, with `fresh` saying whether this statement claimed it. A replay so costs what a fresh
 * validation costs, and a batch of n validations costs one round trip, one parse and one plan instead of n.
 */
function claimQuery(db: Database) {
  const input = db.$with('claim_input').as(
    db
      .select({
        claimId: sql<string>`e->>'id'`.as('claim_id'),
        claimApp: sql<string>`e->>'app'`.as('claim_app'),
        claimKey: sql<string | null>`e->>'key'`.as('claim_key'),
      })
      // unnest(array(…)) rather than jsonb_to_recordset: PostgreSQL guesses 10 rows for the first and 100 for
      // the second, and at 100 a hash join over a sequential scan of pass_tokens looks cheaper than probing
      // its primary key until the table is large (a batch is a handful of claims).
      .from(sql`unnest(array(select jsonb_array_elements(${sql.placeholder('items')}::jsonb))) as e`),
  );
  const claimed = db.$with('claimed').as(
    db
      .update(passTokens)
      .set({ consumedAt: sql`now()`, idempotencyKey: sql`${input.claimKey}` })
      .from(input)
      .where(
        and(
          eq(passTokens.id, input.claimId),
          eq(passTokens.appId, input.claimApp),
          isNull(passTokens.consumedAt),
        ),
      )
      .returning({ claimedId: sql<string>`${passTokens.id}`.as('claimed_id') }),
  );
  const query = db
    .with(input, claimed)
    .select({
      ...getTableColumns(passTokens),
      fresh: sql<boolean>`${passTokens.id} in (select ${claimed.claimedId} from ${claimed})`.mapWith(Boolean),
    })
    .from(passTokens)
    .where(sql`${passTokens.id} in (select ${input.claimId} from ${input})`);
  return query;
}

/** The claim's SQL text (its one parameter `$1`, the batch as JSON): for tests that look at its plan. */
export function claimSql(db: Database): string {
  return claimQuery(db).toSQL().sql;
}

/**
 * The session settings of the claim's own connections on PostgreSQL: no sequential scan, hash join or merge
 * join, so that every plan of the claim, the generic plan of a prepared statement included, is a nested loop
 * probing pass_tokens' primary key once per claim, whatever the table's size when it was planned. Other
 * queries keep the server's settings (these connections carry nothing else).
 */
export const CLAIM_SETTINGS: Readonly<Record<string, string>> = {
  enable_seqscan: 'off',
  enable_hashjoin: 'off',
  enable_mergejoin: 'off',
};

type ClaimStatement = { execute(values: { items: string }): Promise<ClaimedRow[]> };

/**
 * How the claim is sent. On PostgreSQL: prepared once per connection (postgres.js names it) on a side pool
 * of MAX_IN_FLIGHT connections opened with CLAIM_SETTINGS, so a batch is one Bind and Execute in one round
 * trip, run by a cached plan. Elsewhere: unnamed, so the database plans each batch for the table as it is
 * (postgres.js would send an unnamed statement with parameters as two round trips, Parse and Describe, then
 * Bind and Execute, and PostgreSQL would parse and plan every batch).
 * A named statement on an ordinary connection must not be used: its generic plan, made while pass_tokens
 * is small (a new deployment, the bench), joins by hash over a sequential scan and keeps doing so as the
 * table grows, so a validation's cost would grow with the table (docs/decisions.md, "The hot path of a
 * validation").
 */
export type ClaimMode = 'prepared' | 'unnamed';

async function claimStatement(db: Database): Promise<{ mode: ClaimMode; statement: ClaimStatement }> {
  // PostgreSQL over the wire only: the embedded database has no round trip to save, and CockroachDB plans
  // otherwise and refuses settings it does not know.
  // (The side pool connects on its first query: made and unused on CockroachDB, it costs nothing.)
  const side = sidePool(db, 'pass-token-claims', MAX_IN_FLIGHT, CLAIM_SETTINGS);
  if (side && (await isPostgres(db))) {
    return { mode: 'prepared', statement: claimQuery(side).prepare('pass_token_claim') };
  }
  return { mode: 'unnamed', statement: prepareUnnamed(db) };
}

async function isPostgres(db: Database): Promise<boolean> {
  const result = (await db.execute(sql`select version() as version`)) as unknown;
  const version = String(rowsOf<{ version?: unknown }>(result)[0]?.version ?? '');
  return version.startsWith('PostgreSQL') && !/cockroach/i.test(version);
}

function prepareUnnamed(db: Database): ClaimStatement {
  const query = claimQuery(db);
  // drizzle's `prepare()` always names the statement; `_prepare()` without a name is the same query object
  // unnamed (drizzle-orm 0.45, pinned by the lockfile; api/test/validate-cost.test.ts notices a rebuild).
  return (query as unknown as { _prepare(): ReturnType<typeof query.prepare> })._prepare();
}

/** How many tokens claimed by this process a ClaimMemory holds by default (~80 bytes each). */
export const REMEMBERED_CLAIMS = 50_000;

/**
 * The tokens this process claimed, each until it expires, at most `capacity` of them (the oldest dropped
 * first): a replay of one is answered without a database round trip. Only what this process's
 * own statement consumed is remembered, and a consumed row never becomes unconsumed, so what it recalls is
 * what the database would say; a token it does not hold (claimed by another process, or dropped) goes to
 * the database. The claim's idempotency key is kept so that a same-key retry, which must get
 * the original verdict (the row), can still be sent to the database.
 */
export class ClaimMemory {
  readonly #capacity: number;
  /** Token id → its expiry (Unix seconds) when claimed without a key, else [expiry, key]. */
  readonly #entries = new Map<string, number | [number, string]>();
  /**
   * The ids in the order remembered, a ring of `capacity` slots from `#head`, each with its expiry: what
   * goes first. A Map's own order would do, but iterating it from the head after many deletions there walks
   * their tombstones, a cost that grows with the deletions; the ring drops the oldest in constant time.
   */
  readonly #ids: (string | undefined)[];
  readonly #exps: Float64Array;
  #head = 0;
  #count = 0;

  constructor(capacity = REMEMBERED_CLAIMS) {
    if (!(capacity >= 1)) throw new Error('ClaimMemory: capacity must be at least 1');
    this.#capacity = capacity;
    this.#ids = new Array<string | undefined>(capacity);
    this.#exps = new Float64Array(capacity);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Token `id`, expiring at `exp` (Unix seconds), was claimed by this process with idempotency key `key`.
   * A token is claimed once; told again, the memory updates its key and expiry where it stands.
   */
  remember(id: string, exp: number, key: string | null, now = Date.now()): void {
    if (exp * 1000 <= now) return;
    const value: number | [number, string] = key === null ? exp : [exp, key];
    if (this.#entries.has(id)) {
      this.#entries.set(id, value);
      return;
    }
    // Expired tokens at the head go first; when full, the oldest.
    while (this.#count > 0 && (this.#count >= this.#capacity || this.#exps[this.#head]! * 1000 <= now)) {
      const old = this.#ids[this.#head]!;
      this.#ids[this.#head] = undefined;
      this.#head = (this.#head + 1) % this.#capacity;
      this.#count--;
      this.#entries.delete(old);
    }
    const slot = (this.#head + this.#count) % this.#capacity;
    this.#ids[slot] = id;
    this.#exps[slot] = exp;
    this.#count++;
    this.#entries.set(id, value);
  }

  /** The claim of token `id` by this process (its idempotency key), if remembered and not expired. */
  recall(id: string, now = Date.now()): { key: string | null } | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    if (expiry(entry) * 1000 <= now) {
      this.#entries.delete(id);
      return undefined;
    }
    return { key: typeof entry === 'number' ? null : entry[1] };
  }
}

function expiry(entry: number | [number, string]): number {
  return typeof entry === 'number' ? entry : entry[0];
}

interface Claim {
  id: string;
  app: string;
  key: string | null;
  resolve: (row: ClaimedRow | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces validations into one claiming statement (a statement per validation would cost the driver and
 * PostgreSQL more than the rest of the request), as a group commit: the claims of one event-loop turn go
 * in one statement, at most MAX_IN_FLIGHT statements are in flight per process, and beyond that the claims
 * that arrive wait for one to answer and go together in the next. An idle server sends a claim at once; a
 * busy one sends larger batches instead of more statements. Single use holds as with one statement per
 * token: a row is claimed by whichever statement's conditional UPDATE reaches it first (PostgreSQL re-checks
 * `consumed_at is null` after waiting for a concurrent one, across processes too), and within a process a
 * token is never in two statements at once: a second claim waits for the statement that carries the first,
 * then sees it consumed (a replay, or the same-key retry, which reads the first claim's key).
 */
export class PassTokenClaims {
  readonly #db: Database;
  /** How the claim is sent, decided on the first claim (claimStatement); retried after a failure. */
  #statement: Promise<{ mode: ClaimMode; statement: ClaimStatement }> | undefined;
  #queue: Claim[] = [];
  #scheduled = false;
  #inFlight = 0;
  /** Tokens in a statement in flight: another claim of one waits for that statement's answer. */
  readonly #claiming = new Set<string>();
  /**
   * Claiming statements sent and the claims they carried, since this batcher was made; the statements'
   * round trips (send to answer, pool wait included) summed, and the longest since `slowestMs` was last reset.
   */
  readonly stats = { statements: 0, claims: 0, roundTripMs: 0, slowestMs: 0 };
  /** The tokens this process's statements claimed: their replays need no statement (validatePassToken). */
  readonly memory = new ClaimMemory();

  constructor(db: Database) {
    this.#db = db;
  }

  /** How this batcher sends its claims (known after the first claim; tests look). */
  async mode(): Promise<ClaimMode> {
    return (await this.#prepared()).mode;
  }

  #prepared(): Promise<{ mode: ClaimMode; statement: ClaimStatement }> {
    if (!this.#statement) {
      const made = claimStatement(this.#db);
      this.#statement = made;
      made.catch(() => {
        if (this.#statement === made) this.#statement = undefined;
      });
    }
    return this.#statement;
  }

  /** Claims token `id` of `app`; its row as it was before (undefined when none), and whether it was claimed. */
  claim(id: string, app: string, key: string | null): Promise<ClaimedRow | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ id, app, key, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= MAX_IN_FLIGHT || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    const batch: Claim[] = [];
    const held: Claim[] = [];
    for (const claim of this.#queue) {
      if (this.#claiming.has(claim.id) || batch.length >= MAX_BATCH) held.push(claim);
      else {
        this.#claiming.add(claim.id);
        batch.push(claim);
      }
    }
    this.#queue = held;
    if (batch.length === 0) return;
    this.#inFlight++;
    this.stats.statements++;
    this.stats.claims += batch.length;
    const items = JSON.stringify(batch.map(({ id, app, key }) => ({ id, app, key })));
    const sent = performance.now();
    this.#prepared()
      .then(({ statement }) => statement.execute({ items }))
      .then(
        (rows) => {
          const byId = new Map<string, ClaimedRow>();
          for (const row of rows) byId.set(row.id, row);
          for (const claim of batch) claim.resolve(byId.get(claim.id));
        },
        (error: unknown) => {
          for (const claim of batch) claim.reject(error);
        },
      )
      .finally(() => {
        // Next: the claims held (a token in a statement then, or past the batch size), first in the queue,
        // then whatever arrived while this statement ran.
        for (const claim of batch) this.#claiming.delete(claim.id);
        const took = performance.now() - sent;
        this.stats.roundTripMs += took;
        if (took > this.stats.slowestMs) this.stats.slowestMs = took;
        this.#inFlight--;
        this.#schedule();
      });
  }
}

const claimsByDatabase = new WeakMap<Database, PassTokenClaims>();

/** The database's claim batcher, made (and its statement prepared) on first use. */
export function passTokenClaims(db: Database): PassTokenClaims {
  let claims = claimsByDatabase.get(db);
  if (!claims) {
    claims = new PassTokenClaims(db);
    claimsByDatabase.set(db, claims);
  }
  return claims;
}

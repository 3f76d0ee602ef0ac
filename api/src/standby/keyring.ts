import { randomBytes } from 'node:crypto';
import { randomId } from '@gatehouse/core/crypto';
import type { Database } from '@gatehouse/core/db';
import { type StandbyKeyRow, standbyKeys } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import type { OfflineTrust } from '@gatehouse/core/offline-trust';
import { openJson, sealJson } from '@gatehouse/core/sealed';
import type { KeyLookup, StandbyKeyEntry, StandbyKeyStatus } from '@gatehouse/core/standby-keys';
import type { TokenKeys } from '@gatehouse/core/tokens';
import { and, asc, eq, inArray } from 'drizzle-orm';

/**
 * A new key id: 9 random bytes in base64url, never starting with '-'. One in 64 did, and
 * `gatehouse standby-key revoke -Y…` then read the id as an unknown option: that key could not be revoked
 * from the CLI (found by a CI rehearsal).
 */
export function newKid(random: (bytes: number) => string = randomId): string {
  for (;;) {
    const kid = random(9);
    if (!kid.startsWith('-')) return kid;
  }
}

/** What the admin API and `gatehouse standby-key list` show: never the key itself. */
export interface StandbyKeyInfo {
  kid: string;
  region: string;
  status: StandbyKeyStatus;
  created_at: string;
  retired_at: string | null;
  revoked_at: string | null;
}

/** A retired key is handed to the standby this long after its retirement, then only kept in the database. */
const RETIRED_IN_SNAPSHOT_MS = 3600_000;
/**
 * How long a looked-up key is reused without reading the database: validating `offline_` tokens right
 * after an outage then costs no query, and keeps working through a short database loss. Revocation does
 * not wait for it (checkers read revocations from the shared store on every validation); a rotation is
 * seen by this instance within this time. Writes through this instance clear it.
 */
const FIND_CACHE_MS = 30_000;

/**
 * The standby keyring on the main API (states and their meaning: core/src/standby-keys.ts). The master
 * key never leaves the main API; each region's standby gets its own random key in its snapshot, which
 * can be rotated (`rotate`) or revoked (`revoke`) without touching the master key or another region.
 * Revocations are written to the standby's shared store first, so every checker (fallback hosts, every
 * API instance) refuses the key's tokens from the next request on, not from the next snapshot.
 */
export class StandbyKeyring implements KeyLookup {
  readonly #db: Database;
  readonly #wrap: Buffer;
  readonly #trust: OfflineTrust;
  readonly #cache = new Map<string, { entry: StandbyKeyEntry; at: number }>();

  constructor(db: Database, keys: TokenKeys, trust: OfflineTrust) {
    this.#db = db;
    this.#wrap = keys.derive('standby-key-wrap');
    this.#trust = trust;
  }

  async find(kid: string): Promise<StandbyKeyEntry | undefined> {
    const cached = this.#cache.get(kid);
    if (cached && Date.now() - cached.at < FIND_CACHE_MS) return cached.entry;
    const [row] = await this.#db.select().from(standbyKeys).where(eq(standbyKeys.kid, kid));
    if (!row) return undefined;
    const entry = this.#entry(row);
    if (this.#cache.size > 1000) this.#cache.clear();
    this.#cache.set(kid, { entry, at: Date.now() });
    return entry;
  }

  /**
   * The keys a region's standby needs (its active key, recently retired ones). Without an active key, the
   * first one is created when `create` allows it (a region this instance serves); otherwise undefined.
   */
  async forRegion(region: string, create: boolean): Promise<StandbyKeyEntry[] | undefined> {
    let rows = await this.#regionRows(region);
    if (!rows.some((r) => r.status === 'active')) {
      if (!create) return undefined;
      await this.#create(region);
      rows = await this.#regionRows(region);
    }
    const since = Date.now() - RETIRED_IN_SNAPSHOT_MS;
    return rows
      .filter(
        (r) => r.status === 'active' || (r.status === 'retired' && (r.retiredAt?.getTime() ?? 0) > since),
      )
      .map((r) => this.#entry(r));
  }

  async list(): Promise<StandbyKeyInfo[]> {
    const rows = await this.#db.select().from(standbyKeys).orderBy(asc(standbyKeys.createdAt));
    return rows.map(describe);
  }

  /** A new active key for the region; the previous active one is retired (it verifies what it minted). */
  async rotate(region: string): Promise<StandbyKeyInfo> {
    this.#cache.clear();
    await this.#db
      .update(standbyKeys)
      .set({ status: 'retired', retiredAt: new Date() })
      .where(and(eq(standbyKeys.region, region), eq(standbyKeys.status, 'active')));
    return describe(await this.#create(region));
  }

  /**
   * Refuses the key's tokens everywhere at once: the shared store first (what every checker reads), then
   * the database. A revoked active key is replaced, so the region's standby can mint after its next snapshot.
   */
  async revoke(kid: string): Promise<StandbyKeyInfo> {
    const [row] = await this.#db.select().from(standbyKeys).where(eq(standbyKeys.kid, kid));
    if (!row) throw new GatehouseError('not_found', `No standby key ${kid}.`);
    try {
      await this.#trust.revoke(kid);
    } catch {
      throw new GatehouseError(
        'service_unavailable',
        'The standby shared store is unreachable: the key was not revoked. Try again.',
      );
    }
    this.#cache.clear();
    const [revoked] = await this.#db
      .update(standbyKeys)
      .set({ status: 'revoked', revokedAt: new Date() })
      .where(eq(standbyKeys.kid, kid))
      .returning();
    if (row.status === 'active') await this.#create(row.region);
    return describe(revoked!);
  }

  async #regionRows(region: string): Promise<StandbyKeyRow[]> {
    return this.#db
      .select()
      .from(standbyKeys)
      .where(and(eq(standbyKeys.region, region), inArray(standbyKeys.status, ['active', 'retired'])))
      .orderBy(asc(standbyKeys.createdAt));
  }

  async #create(region: string): Promise<StandbyKeyRow> {
    const kid = newKid();
    const [row] = await this.#db
      .insert(standbyKeys)
      .values({
        kid,
        region,
        status: 'active',
        sealedKey: sealJson(this.#wrap, randomBytes(32).toString('base64'), kid),
      })
      .returning();
    return row!;
  }

  #entry(row: StandbyKeyRow): StandbyKeyEntry {
    const key = openJson(this.#wrap, row.sealedKey, row.kid);
    if (typeof key !== 'string')
      throw new Error(`standby key ${row.kid} cannot be unsealed: wrong master key?`);
    return { ...describe(row), key };
  }
}

function describe(row: StandbyKeyRow): StandbyKeyInfo {
  return {
    kid: row.kid,
    region: row.region,
    status: row.status as StandbyKeyStatus,
    created_at: row.createdAt.toISOString(),
    retired_at: row.retiredAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

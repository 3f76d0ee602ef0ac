import { z } from 'zod';
import { hmac } from './crypto.ts';
import { CLOCK_SKEW_SECONDS, OfflineKeys, STANDBY_KID } from './tokens/offline.ts';

/**
 * The standby keyring: one signing key per standby region for `offline_` tokens, random (not derived from
 * the master key), kept by the main API (`api/src/standby/keyring.ts`) and handed to each region's standby
 * in its snapshot. States:
 * - `active`: the region's standby mints with it (one per region);
 * - `retired`: replaced by a rotation; still verifies the tokens minted before the rotation (they live
 *   minutes), never a token claiming a later `iat`;
 * - `revoked`: verifies nothing, at once (the main API also lists revoked ids in the standby's shared
 *   store, which every checker reads, so a revocation does not wait for a snapshot).
 */
export const STANDBY_REGION = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const DEFAULT_REGION = 'default';
export const standbyKeyStatus = z.enum(['active', 'retired', 'revoked']);
export type StandbyKeyStatus = z.infer<typeof standbyKeyStatus>;

export const standbyKeyEntry = z.object({
  kid: z.string().regex(STANDBY_KID),
  region: z.string().regex(STANDBY_REGION),
  /** The raw key, base64 (32 bytes). */
  key: z.string().min(40),
  status: standbyKeyStatus,
  created_at: z.string(),
  retired_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type StandbyKeyEntry = z.infer<typeof standbyKeyEntry>;

/** Where a checker finds the key a token names; the main API reads its database, the standby its snapshot. */
export interface KeyLookup {
  find(kid: string): Promise<StandbyKeyEntry | undefined>;
}

/** Whether this key may vouch for a token minted at `iat` (seconds), by its state alone. */
export function keyAccepts(entry: StandbyKeyEntry, iat: number): boolean {
  if (entry.status === 'revoked') return false;
  if (entry.status === 'retired') {
    const retiredAt = entry.retired_at ? Math.floor(Date.parse(entry.retired_at) / 1000) : 0;
    return iat <= retiredAt + CLOCK_SKEW_SECONDS;
  }
  return true;
}

const derived = new Map<string, { key: string; keys: OfflineKeys }>();
/** The MAC and challenge keys of an entry, derived once per key. */
export function offlineKeysFor(entry: Pick<StandbyKeyEntry, 'kid' | 'key'>): OfflineKeys {
  const cached = derived.get(entry.kid);
  if (cached?.key === entry.key) return cached.keys;
  const keys = new OfflineKeys(Buffer.from(entry.key, 'base64'), entry.kid);
  if (derived.size > 1000) derived.clear();
  derived.set(entry.kid, { key: entry.key, keys });
  return keys;
}

/** A region's keys as its standby holds them (from the snapshot). */
export class SnapshotKeyring implements KeyLookup {
  readonly #byKid: Map<string, StandbyKeyEntry>;

  constructor(entries: StandbyKeyEntry[]) {
    this.#byKid = new Map(entries.map((e) => [e.kid, e]));
  }

  async find(kid: string): Promise<StandbyKeyEntry | undefined> {
    return this.#byKid.get(kid);
  }

  /** The key to mint with: the region's active one. */
  active(): StandbyKeyEntry | undefined {
    for (const entry of this.#byKid.values()) if (entry.status === 'active') return entry;
    return undefined;
  }

  /** Keys that may still open the standby's own sealed challenges (a rotation must not void them). */
  challengeKeys(): Buffer[] {
    return [...this.#byKid.values()]
      .filter((e) => e.status !== 'revoked')
      .sort((a, b) => (a.status === 'active' ? -1 : b.status === 'active' ? 1 : 0))
      .map((e) => offlineKeysFor(e).challenge);
  }
}

/**
 * A sync credential good for one region's snapshot only, derived from STANDBY_SYNC_TOKEN: give each
 * region's standby its own, and a standby host that is compromised can read no other region's keys.
 * `sr_` + base64url(HMAC-SHA-256(sync token, "gatehouse:standby-sync:<region>")).
 */
export function regionSyncCredential(syncToken: string, region: string): string {
  return `sr_${hmac(Buffer.from(syncToken), `gatehouse:standby-sync:${region}`).toString('base64url')}`;
}

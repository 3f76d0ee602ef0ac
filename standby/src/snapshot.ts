import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SnapshotKeyring } from '@gatehouse/core/standby-keys';
import { snapshotSchema } from '@gatehouse/core/standby-snapshot';
import type { z } from 'zod';

export type Snapshot = z.infer<typeof snapshotSchema>;
export type SnapshotApp = Snapshot['apps'][number];

/**
 * Keeps the local copy of what the standby needs to serve alone: loaded from disk at start (so a standby
 * restarted during an outage still serves), refreshed from the main API while it is up, written
 * atomically (temp file + rename, mode 0600: it holds secret hashes and the region's signing keys).
 */
export class SnapshotKeeper {
  readonly #file: string;
  readonly #url: string;
  readonly #token: () => string;
  #snapshot: Snapshot | null = null;
  #byKey = new Map<string, SnapshotApp>();
  #keyring = new SnapshotKeyring([]);
  #refreshedAt: Date | null = null;

  constructor(file: string, mainApiUrl: string, token: () => string, region: string) {
    this.#file = file;
    this.#url = `${mainApiUrl}/internal/v1/standby/snapshot?region=${encodeURIComponent(region)}`;
    this.#token = token;
  }

  get snapshot(): Snapshot | null {
    return this.#snapshot;
  }

  /** The app this key names: its current key, or its previous one until that key's grace ends. */
  app(appKey: string): SnapshotApp | undefined {
    const app = this.#byKey.get(appKey);
    if (!app || app.app_key === appKey) return app;
    const until = app.previous_app_key_expires_at;
    return until !== null && new Date(until) > new Date() ? app : undefined;
  }

  /** The region's signing keys from the snapshot (empty without one). */
  get keyring(): SnapshotKeyring {
    return this.#keyring;
  }

  status() {
    return {
      loaded: this.#snapshot !== null,
      generated_at: this.#snapshot?.generated_at ?? null,
      refreshed_at: this.#refreshedAt?.toISOString() ?? null,
      apps: this.#snapshot?.apps.length ?? 0,
      region: this.#snapshot?.region ?? null,
      active_key: this.#keyring.active()?.kid ?? null,
    };
  }

  /** Loads the file written by an earlier refresh; a missing or unreadable file leaves the standby without one. */
  loadFromDisk(): boolean {
    try {
      this.#use(snapshotSchema.parse(JSON.parse(readFileSync(this.#file, 'utf8'))));
      return true;
    } catch {
      return false;
    }
  }

  /** Fetches a fresh snapshot from the main API and persists it; throws when the main API cannot give one. */
  async refresh(timeoutMs = 5000): Promise<void> {
    const res = await fetch(this.#url, {
      headers: { Authorization: `Bearer ${this.#token()}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`snapshot refresh: the main API answered HTTP ${res.status}`);
    const body = (await res.json()) as { data?: unknown };
    const snapshot = snapshotSchema.parse(body.data);
    mkdirSync(dirname(this.#file), { recursive: true });
    const temp = `${this.#file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(snapshot), { mode: 0o600 });
    renameSync(temp, this.#file);
    this.#use(snapshot);
    this.#refreshedAt = new Date();
  }

  #use(snapshot: Snapshot) {
    this.#snapshot = snapshot;
    // Previous keys first, so a current key always wins over another app's stale previous one.
    this.#byKey = new Map([
      ...snapshot.apps.flatMap((a) => (a.previous_app_key ? [[a.previous_app_key, a] as const] : [])),
      ...snapshot.apps.map((a) => [a.app_key, a] as const),
    ]);
    this.#keyring = new SnapshotKeyring(snapshot.offline_keys);
  }
}

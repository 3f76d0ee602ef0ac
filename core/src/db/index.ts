import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';
import { protectFolder } from './private-files.ts';
import * as schema from './schema.ts';

export type { Database } from './database.ts';
export { privateFolder, protectFolder } from './private-files.ts';
export {
  DB_REGION_PATTERN,
  enableRegionalWrites,
  REGIONAL_TABLES,
  type RegionalWrites,
  regional,
  regionalColumn,
} from './region.ts';
export { isRetryableTransactionError, withRetry } from './retry.ts';
export { rowsOf } from './rows.ts';
export * as schema from './schema.ts';
export { isDatabaseUnavailable } from './unavailable.ts';

export interface DatabaseHandle {
  db: Database;
  /** 'pglite' for the embedded default, 'postgres' for PostgreSQL or CockroachDB over the wire. */
  kind: 'pglite' | 'postgres';
  /** Runs the committed migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /** Cheap round trip for readiness probes. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), '../../migrations');

export interface OpenDatabaseOptions {
  /** postgres:// or postgresql:// URL; absent means embedded PGlite in `dataDir`. */
  url?: string | undefined;
  /** Folder for PGlite's files; `memory://` keeps it in memory (tests). */
  dataDir?: string | undefined;
  /** Pool size for the wire driver. */
  poolMax?: number | undefined;
}

/** Opens the database the configuration names: PostgreSQL/CockroachDB by URL, else embedded PGlite. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return openPostgres(options.url, options.poolMax ?? 10);
  return openPglite(options.dataDir ?? 'memory://');
}

/** Opens (once per name) a side pool of a database opened over the wire; see `sidePool`. */
type SidePoolOpener = (name: string, max: number, settings: Record<string, string>) => Database;
const sidePoolOpeners = new WeakMap<Database, SidePoolOpener>();

/**
 * A second, small pool on the same PostgreSQL database as `db`, whose connections open with `settings` as
 * session settings (startup parameters, so a reconnected connection has them too), made on first request
 * (one per `name`) and closed with `db`'s handle; undefined for the embedded database. For a statement that
 * needs planner settings of its own without imposing them on every other query (the batched pass token
 * claim, api/src/tokens/pass-token-claims.ts). PostgreSQL refuses a connection with a setting it does not
 * know: the caller checks the engine first.
 */
export function sidePool(
  db: Database,
  name: string,
  max: number,
  settings: Record<string, string>,
): Database | undefined {
  return sidePoolOpeners.get(db)?.(name, max, settings);
}

async function openPostgres(url: string, poolMax: number): Promise<DatabaseHandle> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const open = (max: number, settings?: Record<string, string>) =>
    postgres(url, {
      max,
      onnotice: () => {},
      connect_timeout: 10,
      // postgres.js waits before reconnecting, up to 20 s after repeated failures, and every query queued
      // meanwhile waits too: a lost database would hang requests instead of answering 503 promptly.
      backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
      ...(settings ? { connection: settings } : {}),
    });
  const client = open(poolMax);
  const db = drizzle(client, { schema }) as unknown as Database;
  const sides = new Map<string, { client: ReturnType<typeof open>; db: Database }>();
  let closed = false;
  sidePoolOpeners.set(db, (name, max, settings) => {
    if (closed) throw new Error('The database is closed.');
    let side = sides.get(name);
    if (!side) {
      const sideClient = open(max, settings);
      side = { client: sideClient, db: drizzle(sideClient, { schema }) as unknown as Database };
      sides.set(name, side);
    }
    return side.db;
  });
  return {
    db,
    kind: 'postgres',
    migrate: () => migrate(db as never, { migrationsFolder: MIGRATIONS_FOLDER }),
    ping: async () => {
      await client`select 1`;
    },
    close: async () => {
      closed = true;
      await Promise.all(
        [client, ...[...sides.values()].map((side) => side.client)].map((c) => c.end({ timeout: 5 })),
      );
    },
  };
}

async function openPglite(dataDir: string): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  const onDisk = !dataDir.startsWith('memory://');
  // Folders 0700 and files 0600, including every file PGlite creates later (see private-files.ts).
  if (onDisk) protectFolder(dataDir);
  const release = onDisk ? lockDataDir(dataDir) : () => {};
  let client: InstanceType<typeof PGlite>;
  try {
    client = await PGlite.create(dataDir);
  } catch (error) {
    release();
    throw error;
  }
  const db = drizzle(client, { schema });
  return {
    db: db as unknown as Database,
    kind: 'pglite',
    migrate: () => migrate(db, { migrationsFolder: MIGRATIONS_FOLDER }),
    ping: async () => {
      await client.query('select 1');
    },
    close: async () => {
      // Idempotent: a database already closed (or lost) is released all the same.
      if (!client.closed) await client.close();
      release();
    },
  };
}

/**
 * PGlite is one process's database: a second process opening the same folder corrupts it. An exclusive
 * lock file holding the owner's pid makes the second opener fail with a clear sentence instead; a lock
 * left by a process that no longer exists is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'gatehouse.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch {
      const owner = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(`The embedded database in ${dataDir} is in use by process ${owner}.`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Cannot lock the embedded database in ${dataDir}.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

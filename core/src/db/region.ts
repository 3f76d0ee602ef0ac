import { getTableColumns, getTableName, type SQL, sql } from 'drizzle-orm';
import { type PgTable, text } from 'drizzle-orm/pg-core';
import type { Database } from './database.ts';
import { rowsOf } from './rows.ts';

/**
 * Rows homed in the API's own region on CockroachDB (REGIONAL BY ROW, docs/deploy.md): the regional
 * tables' inserts name `crdb_region` = GATEHOUSE_DB_REGION explicitly, instead of leaving it to the
 * column's default (the gateway node's region), so a row stays at home whichever node the connection
 * reached. Only tables that have the column get it: a PostgreSQL database has none (nothing changes), a
 * CockroachDB table gets it when `ALTER TABLE … SET LOCALITY REGIONAL BY ROW` ran (the chart's localities
 * Job, or scripts/cockroachdb), which the API notices within a minute.
 */

/** The per-request tables, REGIONAL BY ROW on CockroachDB (the chart's cockroachdb.tables.regionalByRow). */
export const REGIONAL_TABLES = [
  'pass_tokens',
  'server_tokens',
  'challenge_attempts',
  'app_usage',
  'usage_hourly',
] as const;
export type RegionalTable = (typeof REGIONAL_TABLES)[number];

/**
 * A CockroachDB region name as cloud providers and `--locality=region=` spell them (`us-east1`,
 * `europe-west1`, `aws-eu-west-1`): lower-case letters, digits and inner dashes, at most 63 characters.
 */
export const DB_REGION_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

interface RegionState {
  region: string;
  /** The regional tables that have a `crdb_region` column right now. */
  tables: ReadonlySet<string>;
  twins: WeakMap<PgTable, PgTable>;
}

const states = new WeakMap<Database, RegionState>();
const DRIZZLE_COLUMNS = Symbol.for('drizzle:Columns');

export interface RegionalWrites {
  /** Where the database is: its engine and, on CockroachDB, the database's regions. */
  engine: 'cockroachdb' | 'postgres';
  databaseRegions: string[];
  /** Regional tables whose inserts carry `crdb_region`. */
  tables: string[];
  /** Looks at the columns again (the API calls it every minute); returns the tables found. */
  refresh(): Promise<string[]>;
}

/**
 * Turns regional writes on for `db` with `region`: on CockroachDB (told by `SELECT version()`) the region
 * must be one of the database's regions, else this throws one sentence naming them (every insert would
 * fail otherwise); then the regional tables that have a `crdb_region` column get it in their inserts.
 */
export async function enableRegionalWrites(db: Database, region: string): Promise<RegionalWrites> {
  if (!DB_REGION_PATTERN.test(region))
    throw new Error(
      `GATEHOUSE_DB_REGION "${region}" is not a region name (a-z, 0-9 and inner -, at most 63).`,
    );
  const [version] = rowsOf<{ version: string }>(await db.execute(sql`select version() as version`));
  const engine = /cockroachdb/i.test(version?.version ?? '') ? 'cockroachdb' : 'postgres';
  let databaseRegions: string[] = [];
  if (engine === 'cockroachdb') {
    databaseRegions = rowsOf<{ region: string }>(
      await db.execute(sql`select region from [show regions from database]`),
    ).map((r) => r.region);
    if (databaseRegions.length > 0 && !databaseRegions.includes(region))
      throw new Error(
        `GATEHOUSE_DB_REGION "${region}" is not a region of this database (its regions: ${databaseRegions.join(', ')}).`,
      );
  }
  const state: RegionState = { region, tables: new Set(), twins: new WeakMap() };
  const refresh = async () => {
    const found = rowsOf<{ table_name: string }>(
      await db.execute(sql`
        select table_name from information_schema.columns
        where table_schema = current_schema() and column_name = 'crdb_region'
          and table_name in (${sql.join(
            REGIONAL_TABLES.map((t) => sql`${t}`),
            sql`, `,
          )})`),
    ).map((r) => r.table_name);
    state.tables = new Set(found);
    return found.sort();
  };
  const tables = await refresh();
  states.set(db, state);
  return { engine, databaseRegions, tables, refresh };
}

/**
 * The table to insert into: `table` itself, or, when regional writes are on and it has the column, a twin
 * with one more column, `crdb_region`, defaulted to the region (so the call site's values stay as they are).
 */
export function regional<T extends PgTable>(db: Database, table: T): T {
  const state = states.get(db);
  if (state === undefined) return table;
  if (!state.tables.has(getTableName(table))) return table;
  let twin = state.twins.get(table);
  if (!twin) {
    const region = state.region;
    const builder = text('crdb_region').$defaultFn(() => region) as unknown as {
      build(t: PgTable): unknown;
    };
    // drizzle's inserts list the columns of `table[Symbol.for('drizzle:Columns')]`: the twin inherits
    // everything else from the table (name, schema) and overrides that list (tested on PostgreSQL).
    const columns = { ...getTableColumns(table), crdbRegion: builder.build(table) };
    twin = Object.create(table, { [DRIZZLE_COLUMNS]: { value: columns } }) as PgTable;
    state.twins.set(table, twin);
  }
  return twin as T;
}

/** For hand-written inserts: `, crdb_region` and `, <region>` to append to the column and value lists, or nothing. */
export function regionalColumn(db: Database, table: RegionalTable): { column: SQL; value: SQL } {
  const state = states.get(db);
  if (!state?.tables.has(table)) return { column: sql``, value: sql`` };
  return { column: sql`, crdb_region`, value: sql`, ${state.region}` };
}

import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema.ts';

/** A Drizzle handle on Gatehouse's schema, whichever driver is under it (PGlite or postgres.js). */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

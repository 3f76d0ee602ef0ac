import { z } from 'zod';

/**
 * Whether outage tokens survive a recovery. An `offline_` token is checked against the outage its region
 * recorded and spent in the standby's shared store (STANDBY_STORE_URL); a main API or a standby that keeps
 * them in its own memory cannot see what the other recorded or spent, so after a recovery the main API
 * refuses every outage token (`no_recorded_outage`). Only a process sharing its memory with the other
 * (`npm start`) may go without.
 */
export const standbyStoreState = z.strictObject({
  shared: z.boolean().meta({
    description: 'The outage log and the spent tokens are where the main API and every standby see them.',
  }),
  warning: z
    .string()
    .nullable()
    .meta({ description: 'What is lost and how to fix it; null when nothing is.' }),
});
export type StandbyStoreState = z.output<typeof standbyStoreState>;

const FIX = 'set STANDBY_STORE_URL to the same Redis on the main API and on every standby process';

/** The state of a standby process: its store is its own unless given one (npm start) or STANDBY_STORE_URL. */
export function standbyProcessStore(
  storeUrl: string | undefined,
  sharedInProcess: boolean,
): StandbyStoreState {
  if (storeUrl || sharedInProcess) return { shared: true, warning: null };
  return {
    shared: false,
    warning: `STANDBY_STORE_URL is not set: the outages this standby records and the offline_ tokens it spends stay in its memory, so the main API refuses every offline_ token after it recovers; ${FIX}`,
  };
}

/** The state of the main API: without a shared store, standby hosts it publishes run in other processes. */
export function mainApiStore(
  storeUrl: string | undefined,
  sharedInProcess: boolean,
  publishesStandbys: boolean,
): StandbyStoreState {
  if (storeUrl || sharedInProcess || !publishesStandbys) return { shared: true, warning: null };
  return {
    shared: false,
    warning: `STANDBY_STORE_URL is not set while standby hosts are published (STANDBY_BYPASS_URLS, STANDBY_FALLBACK_URLS): this API cannot see the outages they record, so it refuses every offline_ token after a recovery; ${FIX}`,
  };
}

/**
 * Refuses the start in production (NODE_ENV=production: the container images), where nobody reads a
 * warning before outage tokens are lost; elsewhere the warning is the start-up's loudest line.
 */
export function enforceStandbyStore(
  state: StandbyStoreState,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): void {
  if (!state.warning) return;
  if (env.NODE_ENV === 'production') throw new Error(state.warning);
  warn(state.warning);
}

import type { Database, DatabaseHandle } from '@gatehouse/core/db';
import type { ConsumptionStore } from '@gatehouse/core/offline-consumption';
import type { OfflineTrust } from '@gatehouse/core/offline-trust';
import type { OfflineChecker } from '@gatehouse/core/offline-validation';
import type { TokenKeys } from '@gatehouse/core/tokens';
import type { StandbyStoreState } from '@gatehouse/standby/store-check';
import type { Logger } from 'pino';
import type { AppRepository } from './apps/repository.ts';
import type { AuthThrottle } from './auth-throttle.ts';
import type { AlternativeCounter } from './challenges/alternative-limit.ts';
import type { Config } from './config.ts';
import type { RiskDecisions } from './console/decisions.ts';
import type { ConsoleSessions } from './console/sessions.ts';
import type { UsageRollup } from './console/usage.ts';
import type { Metrics } from './metrics.ts';
import type { IssuanceLimiter } from './quotas/issuance-limiter.ts';
import type { AttestationVerifier } from './risk/attestation.ts';
import type { RiskEngine } from './risk/engine.ts';
import type { StandbyKeyring } from './standby/keyring.ts';

/** Everything a request handler may use; built once in `bootstrap.ts`, injected so tests can build their own. */
export interface Deps {
  config: Config;
  database: DatabaseHandle;
  db: Database;
  keys: TokenKeys;
  apps: AppRepository;
  /**
   * `offline_` tokens: the standby keyring (one key per region), the outage log and revocations, and the
   * shared store where they are marked used (all three in `offline`, as the validation takes them).
   */
  standbyKeys: StandbyKeyring;
  offlineTrust: OfflineTrust;
  offlineStore: ConsumptionStore;
  offline: OfflineChecker;
  /** Bearer token of the standby's snapshot (STANDBY_SYNC_TOKEN, else generated): never the admin token. */
  syncToken: string;
  issuanceLimiter: IssuanceLimiter;
  /** Accessible alternatives taken per client address and hour (REDIS_URL: shared by every instance). */
  alternatives: AlternativeCounter;
  /** Failed authentication counted per source and credential (REDIS_URL: shared by every instance). */
  authThrottle: AuthThrottle;
  risk: RiskEngine;
  /** Usage per app and hour for the console (counted in memory, flushed in batches). */
  usage: UsageRollup;
  /** The latest risk decisions with their reasons, for the console. */
  decisions: RiskDecisions;
  /** Present when Privacy Pass issuers are configured. */
  attestation: AttestationVerifier | undefined;
  metrics: Metrics;
  logger: Logger;
  adminToken: string;
  /** Whether outage tokens survive a recovery (STANDBY_STORE_URL): /readyz and the console say so. */
  standbyStore?: StandbyStoreState;
  /** The console's sign-in sessions (in the database, shared by every instance). */
  consoleSessions: ConsoleSessions;
}

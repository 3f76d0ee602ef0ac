import type { Database, DatabaseHandle } from '@gatehouse/core/db';
import type { ConsumptionStore } from '@gatehouse/core/offline-consumption';
import type { OfflineKeys, TokenKeys } from '@gatehouse/core/tokens';
import type { Logger } from 'pino';
import type { AppRepository } from './apps/repository.ts';
import type { Config } from './config.ts';
import type { Metrics } from './metrics.ts';
import type { IssuanceLimiter } from './quotas/issuance-limiter.ts';
import type { AttestationVerifier } from './risk/attestation.ts';
import type { RiskEngine } from './risk/engine.ts';

/** Everything a request handler may use; built once in `bootstrap.ts`, injected so tests can build their own. */
export interface Deps {
  config: Config;
  database: DatabaseHandle;
  db: Database;
  keys: TokenKeys;
  apps: AppRepository;
  /** The standby's key and shared store: the main API validates `offline_` tokens after a recovery. */
  offlineKeys: OfflineKeys;
  offlineStore: ConsumptionStore;
  issuanceLimiter: IssuanceLimiter;
  risk: RiskEngine;
  /** Present when Privacy Pass issuers are configured. */
  attestation: AttestationVerifier | undefined;
  metrics: Metrics;
  logger: Logger;
  adminToken: string;
}

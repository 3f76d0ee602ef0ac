import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DatabaseHandle, enableRegionalWrites, openDatabase, privateFolder } from '@gatehouse/core/db';
import { createLogger } from '@gatehouse/core/logging';
import { genuineRefusalAlarm } from '@gatehouse/core/offline-alarm';
import {
  type ConsumptionStore,
  MemoryConsumptionStore,
  RedisConsumptionStore,
} from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust, type OfflineTrust, RedisOfflineTrust } from '@gatehouse/core/offline-trust';
import { enforceStandbyStore, mainApiStore } from '@gatehouse/standby/store-check';
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { AppRepository } from './apps/repository.ts';
import { AuthThrottle } from './auth-throttle.ts';
import { alternativeSettings } from './challenges/alternative.ts';
import { AlternativeCounter } from './challenges/alternative-limit.ts';
import { keyboardPowSeconds } from './challenges/priced-pow.ts';
import type { Config } from './config.ts';
import { RiskDecisions } from './console/decisions.ts';
import { CONSOLE_SESSION_LIMITS, ConsoleSessions } from './console/sessions.ts';
import { UsageRollup } from './console/usage.ts';
import type { Deps } from './deps.ts';
import { createMetrics } from './metrics.ts';
import { IssuanceLimiter } from './quotas/issuance-limiter.ts';
import { flushQuotaCounts } from './quotas/monthly-quota.ts';
import { RedisAnswerHistory } from './risk/answer-history.ts';
import type { AttestationVerifier } from './risk/attestation.ts';
import { RiskEngine } from './risk/engine.ts';
import { datacenterRanges } from './risk/ranges.ts';
import { Reputation } from './risk/reputation.ts';
import { MemoryVelocity, RedisVelocity } from './risk/velocity.ts';
import { StandbyKeyring } from './standby/keyring.ts';
import { loadTokenKeys } from './tokens/master-key.ts';

export interface Runtime extends Deps {
  /** Releases the database, Redis and timers. */
  close(): Promise<void>;
}

/** Opens everything the API depends on, in order, and runs the migrations. */
export interface BootstrapOptions {
  /** Shared with standby roles running in the same process (`npm start`); else STANDBY_STORE_URL or memory. */
  offlineStore?: ConsumptionStore;
  /** The outage log and revocations, shared the same way (`npm start`, tests); else STANDBY_STORE_URL or memory. */
  offlineTrust?: OfflineTrust;
  /** The clock of the console's sessions (epoch ms): tests move it to expire sessions without waiting. */
  consoleClock?: () => number;
}

export async function bootstrap(
  config: Config,
  logger?: Logger,
  options: BootstrapOptions = {},
): Promise<Runtime> {
  // Read at each challenge (tests change them), checked first so that a bad value stops the start.
  alternativeSettings();
  keyboardPowSeconds();
  const log = logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  // Outage tokens lost after a recovery: refused in production, the start's loudest line elsewhere.
  const standbyStore = mainApiStore(
    config.standby.storeUrl,
    options.offlineStore !== undefined,
    config.standby.bypassUrls.length + config.standby.fallbackUrls.length > 0,
  );
  enforceStandbyStore(standbyStore, process.env, (message) => log.warn(message));
  // DATA_DIR holds the generated admin token and sync credential, and by default the embedded database:
  // private when Gatehouse writes any of them (a deployment with all three configured writes nothing).
  const writesLocally = !config.databaseUrl || !config.adminToken || !config.standby.syncToken;
  if (writesLocally && !privateFolder(config.dataDir)) {
    log.warn({ dataDir: config.dataDir }, 'DATA_DIR could not be made private (mode 0700): check its owner');
  }
  const adminToken = config.adminToken ?? localAdminToken(config.dataDir);
  const syncToken = config.standby.syncToken ?? localSecret(config.dataDir, 'standby-sync-token', 'st_');
  if (syncToken === adminToken) {
    throw new Error('STANDBY_SYNC_TOKEN must differ from the admin token: a standby host must not hold it.');
  }
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.pgliteDir,
    poolMax: config.dbPoolMax,
  });
  await database.migrate();
  // REGIONAL BY ROW: rows in this instance's region (core/src/db/region.ts); a wrong region stops the start.
  const regionRefresh = config.dbRegion ? await regionalWrites(database, config.dbRegion, log) : undefined;
  const usage = new UsageRollup(database.db, log);
  const keys = await loadTokenKeys(database.db, config.tokenKey);
  const redis = config.redisUrl ? await redisClient(config.redisUrl, { maxRetriesPerRequest: 2 }) : undefined;
  const issuanceLimiter = new IssuanceLimiter(redis);
  const standbyRedis = config.standby.storeUrl
    ? await redisClient(config.standby.storeUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 })
    : undefined;
  const offlineStore =
    options.offlineStore ??
    (standbyRedis ? new RedisConsumptionStore(standbyRedis) : new MemoryConsumptionStore());
  const offlineTrust =
    options.offlineTrust ?? (standbyRedis ? new RedisOfflineTrust(standbyRedis) : new MemoryOfflineTrust());
  const standbyKeys = new StandbyKeyring(database.db, keys, offlineTrust);
  const metrics = createMetrics();
  return {
    config,
    database,
    db: database.db,
    keys,
    apps: new AppRepository(database.db),
    standbyKeys,
    offlineTrust,
    offlineStore,
    standbyStore,
    offline: {
      keys: standbyKeys,
      trust: offlineTrust,
      store: offlineStore,
      onGenuineRefused: genuineRefusalAlarm(log, (reason) => metrics.offlineGenuineRefused.inc({ reason })),
    },
    syncToken,
    issuanceLimiter,
    alternatives: new AlternativeCounter(redis),
    authThrottle: new AuthThrottle(config.authThrottle, log, redis),
    usage,
    decisions: new RiskDecisions(),
    risk: new RiskEngine(
      redis ? new RedisVelocity(redis) : new MemoryVelocity(),
      config.reputationFile ? Reputation.fromFile(config.reputationFile) : undefined,
      datacenterRanges(config.datacenterRanges),
      redis ? new RedisAnswerHistory(redis) : undefined,
    ),
    attestation: await attestationVerifier(config),
    metrics,
    logger: log,
    adminToken,
    consoleSessions: new ConsoleSessions(
      database.db,
      adminToken,
      CONSOLE_SESSION_LIMITS,
      options.consoleClock,
    ),
    async close() {
      // Quota units counted without waiting (overage plans) are written before the database closes.
      await flushQuotaCounts(database.db).catch(() => {});
      await usage.close();
      await issuanceLimiter.close();
      redis?.disconnect();
      standbyRedis?.disconnect();
      if (regionRefresh) clearInterval(regionRefresh);
      await database.close();
    },
  };
}

/**
 * Libraries only some deployments use are loaded when configured, not at start-up: ioredis (REDIS_URL,
 * STANDBY_STORE_URL) and the Privacy Pass verifier (PRIVACY_PASS_ISSUERS). Loading a module costs resident
 * memory in every process, used or not, and each API process has a resident-memory budget (≤ 150 MiB).
 */
async function redisClient(url: string, options: RedisOptions): Promise<Redis> {
  // Through the default export (ioredis's module.exports, which carries Redis too): a chunk of the bundle
  // exposes a CommonJS package as its default only.
  const { Redis } = (await import('ioredis')).default;
  return new Redis(url, options);
}

async function attestationVerifier(config: Config): Promise<AttestationVerifier | undefined> {
  const { issuers, origins } = config.privacyPass;
  if (issuers.length === 0) return undefined;
  const { AttestationVerifier } = await import('./risk/attestation.ts');
  return AttestationVerifier.create(issuers, origins);
}

/**
 * Without GATEHOUSE_ADMIN_TOKEN a token is generated once into DATA_DIR/admin-token (mode 0600), where
 * the `gatehouse` command on the same machine finds it. The `at_` prefix keeps it from ever starting with
 * a dash (about 1 in 32 base64url tokens would), which option parsers read as a flag in
 * `--admin-token TOKEN`, and makes it recognisable to secret scanners, as `sk_` does for app secrets.
 */
export function localAdminToken(dataDir: string): string {
  return localSecret(dataDir, 'admin-token', 'at_');
}

/**
 * A secret generated once into DATA_DIR/<name> (mode 0600) and read back on every start: the admin token
 * (`at_`) and the standby's sync credential (`st_`, STANDBY_SYNC_TOKEN unset), which `npm start` hands to
 * its standby roles and a standby on the same machine reads from DATA_DIR/standby-sync-token.
 */
export function localSecret(dataDir: string, name: string, prefix: string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const token = `${prefix}${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}

/**
 * Turns on explicit `crdb_region` writes and looks at the columns again every minute, so tables the
 * localities Job makes REGIONAL BY ROW after the start get it too. Throws for a region the database lacks.
 */
async function regionalWrites(
  database: DatabaseHandle,
  region: string,
  log: Logger,
): Promise<NodeJS.Timeout> {
  let writes: Awaited<ReturnType<typeof enableRegionalWrites>>;
  try {
    writes = await enableRegionalWrites(database.db, region);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  const { engine, databaseRegions, tables } = writes;
  if (engine === 'cockroachdb' && databaseRegions.length === 0)
    log.warn(
      { region },
      'GATEHOUSE_DB_REGION is set but the database has no regions yet (ALTER DATABASE … SET PRIMARY REGION)',
    );
  else if (engine === 'postgres' && tables.length === 0)
    log.info({ region }, 'GATEHOUSE_DB_REGION has no effect on PostgreSQL (no crdb_region columns)');
  else log.info({ region, tables }, 'rows written with crdb_region');
  let seen = tables.join();
  const timer = setInterval(() => {
    writes.refresh().then(
      (now) => {
        if (now.join() !== seen) log.info({ region, tables: now }, 'rows written with crdb_region');
        seen = now.join();
      },
      () => {}, // a lost database is reported by the requests and probes that meet it
    );
  }, 60_000);
  timer.unref();
  return timer;
}

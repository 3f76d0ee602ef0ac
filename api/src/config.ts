import { DB_REGION_PATTERN } from '@gatehouse/core/db';
import {
  type ClientAddressConfig,
  type HttpLimits,
  loadClientAddressConfig,
  loadHttpLimits,
} from '@gatehouse/core/http';
import { LOG_FORMATS } from '@gatehouse/core/logging';
import { DEFAULT_REGION, STANDBY_REGION } from '@gatehouse/core/standby-keys';
import { z } from 'zod';
import { type AuthThrottleLimits, loadAuthThrottleLimits } from './auth-throttle.ts';
import { type InternalEndpointsConfig, loadInternalEndpoints } from './internal-endpoints.ts';

/**
 * PRIVACY_PASS_ISSUERS entries. Declared here rather than beside the verifier (risk/attestation.ts), which
 * bootstrap loads only when issuers are configured: its Privacy Pass libraries cost resident memory.
 */
const issuerConfig = z.array(
  z.object({ name: z.string().min(1).max(255), public_key: z.string().min(1).describe('SPKI DER, base64') }),
);
export type PrivacyPassIssuer = z.infer<typeof issuerConfig>[number];

/** The environment, parsed once and typed. `.env.example` lists every key. */
const schema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must start with postgres:// or postgresql://')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  DATA_DIR: z.string().default('.gatehouse-data'),
  PGLITE_DIR: z.string().optional(),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /** CockroachDB region this instance homes its rows in (REGIONAL BY ROW `crdb_region`); the operator sets it per region. */
  GATEHOUSE_DB_REGION: z
    .string()
    .regex(
      DB_REGION_PATTERN,
      'GATEHOUSE_DB_REGION must be a CockroachDB region name: a-z, 0-9 and inner dashes, at most 63 characters (e.g. europe-west1)',
    )
    .optional()
    .or(z.literal('').transform(() => undefined)),
  REDIS_URL: z
    .string()
    .optional()
    .or(z.literal('').transform(() => undefined)),
  GATEHOUSE_ADMIN_TOKEN: z
    .string()
    .min(24, 'GATEHOUSE_ADMIN_TOKEN must be at least 24 characters')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  GATEHOUSE_TOKEN_KEY: z
    .string()
    .optional()
    .or(z.literal('').transform(() => undefined)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(LOG_FORMATS).default('auto'),
  RISK_REPUTATION_FILE: z.string().optional(),
  /** `builtin` (default): the committed hosting/datacenter ranges; `off`; or a file in the same format. */
  RISK_DATACENTER_RANGES: z.string().default('builtin'),
  PRIVACY_PASS_ISSUERS: z.string().optional(),
  STANDBY_BYPASS_URLS: z.string().optional(),
  STANDBY_FALLBACK_URLS: z.string().optional(),
  STANDBY_STORE_URL: z.string().optional(),
  /** This instance's region (the operator sets it per region): its standbys' signing key is created on first read. */
  GATEHOUSE_REGION: z
    .string()
    .regex(STANDBY_REGION, 'GATEHOUSE_REGION must be 1 to 32 characters of a-z, 0-9 or -')
    .default(DEFAULT_REGION),
  /** Further regions whose standbys read this instance's snapshot (comma-separated). */
  STANDBY_REGIONS: z.string().optional(),
  STANDBY_SYNC_TOKEN: z
    .string()
    .min(24, 'STANDBY_SYNC_TOKEN must be at least 24 characters (it unlocks the standby keys)')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  PRIVACY_PASS_ORIGIN: z.string().optional(),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(256).max(1_048_576).default(16_384),
  /** After SIGTERM, how long the API keeps answering (each answer closing its connection) before it stops listening. */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(60_000).default(0),
});

export type Config = {
  host: string;
  port: number;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Where the embedded database keeps its files; `memory://` for none. */
  pgliteDir: string;
  dbPoolMax: number;
  /** GATEHOUSE_DB_REGION: the `crdb_region` of the rows this instance writes (core/src/db/region.ts). */
  dbRegion: string | undefined;
  redisUrl: string | undefined;
  adminToken: string | undefined;
  tokenKey: Buffer | undefined;
  /** Who the client is behind the proxies the deployment declares (TRUSTED_PROXIES). */
  clientAddress: ClientAddressConfig;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  /** auto: readable in a terminal, JSON otherwise. */
  logFormat: z.infer<typeof schema>['LOG_FORMAT'];
  bodyLimitBytes: number;
  /**
   * SHUTDOWN_DRAIN_MS: after SIGTERM, the time the API keeps serving before it closes its listener, every
   * answer closing its connection, so that clients move to other instances while the platform takes
   * this one out of rotation (a Service's endpoints, a load balancer's targets). 0: close at once.
   */
  shutdownDrainMs: number;
  /** Header, request and keep-alive timeouts and the connection cap of the listener (HTTP_*). */
  http: HttpLimits;
  /** INTERNAL_PORT and METRICS_TOKEN: where /metrics and /internal/* are served (internal-endpoints.ts). */
  internal: InternalEndpointsConfig;
  /** Failed-authentication throttling (AUTH_FAILURE*). */
  authThrottle: AuthThrottleLimits;
  /** JSON file of CIDR lists {deny, datacenter, allow} applied to every app. */
  reputationFile: string | undefined;
  /** Hosting/datacenter ranges scored by the risk engine: the built-in file, another file, or none. */
  datacenterRanges: 'builtin' | 'off' | { file: string };
  /** Trusted Privacy Pass issuers (JSON [{name, public_key}]) and the origin names tokens must be for. */
  /** Standby hosts published to clients, the shared store of offline tokens, the snapshot token. */
  standby: {
    bypassUrls: string[];
    fallbackUrls: string[];
    storeUrl: string | undefined;
    syncToken: string | undefined;
    /**
     * The regions whose standbys this instance serves (GATEHOUSE_REGION, then STANDBY_REGIONS): a snapshot
     * read creates a region's first signing key only for these; any other region must have keys already.
     */
    regions: string[];
  };
  privacyPass: { issuers: { name: string; public_key: string }[]; origins: string[] };
};

/** Parses the environment; throws one precise sentence per bad key, at start-up, never later. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = result.data;
  let tokenKey: Buffer | undefined;
  if (e.GATEHOUSE_TOKEN_KEY) {
    tokenKey = Buffer.from(e.GATEHOUSE_TOKEN_KEY, 'base64');
    if (tokenKey.length < 32)
      throw new Error('GATEHOUSE_TOKEN_KEY must be at least 32 bytes, base64-encoded.');
  }
  return {
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    pgliteDir: e.PGLITE_DIR || `${e.DATA_DIR}/pgdata`,
    dbPoolMax: e.DB_POOL_MAX,
    dbRegion: e.GATEHOUSE_DB_REGION,
    redisUrl: e.REDIS_URL,
    adminToken: e.GATEHOUSE_ADMIN_TOKEN,
    tokenKey,
    clientAddress: loadClientAddressConfig(env),
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    http: loadHttpLimits(env),
    internal: loadInternalEndpoints(env),
    authThrottle: loadAuthThrottleLimits(env),
    reputationFile: e.RISK_REPUTATION_FILE || undefined,
    datacenterRanges:
      e.RISK_DATACENTER_RANGES === 'builtin' || e.RISK_DATACENTER_RANGES === ''
        ? 'builtin'
        : e.RISK_DATACENTER_RANGES === 'off'
          ? 'off'
          : { file: e.RISK_DATACENTER_RANGES },
    standby: {
      bypassUrls: urlList(e.STANDBY_BYPASS_URLS, 'STANDBY_BYPASS_URLS'),
      fallbackUrls: urlList(e.STANDBY_FALLBACK_URLS, 'STANDBY_FALLBACK_URLS'),
      storeUrl: e.STANDBY_STORE_URL || undefined,
      syncToken: e.STANDBY_SYNC_TOKEN || undefined,
      regions: standbyRegions(e.GATEHOUSE_REGION, e.STANDBY_REGIONS),
    },
    privacyPass: {
      issuers: parseIssuers(e.PRIVACY_PASS_ISSUERS),
      origins: (e.PRIVACY_PASS_ORIGIN || e.HOST)
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    },
  };
}

function parseIssuers(raw: string | undefined): { name: string; public_key: string }[] {
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(
      'PRIVACY_PASS_ISSUERS must be JSON: [{"name": "issuer.example", "public_key": "<SPKI base64>"}].',
    );
  }
  const result = issuerConfig.safeParse(parsed);
  if (!result.success) {
    throw new Error('PRIVACY_PASS_ISSUERS must be a list of {"name", "public_key"} objects.');
  }
  return result.data;
}

function urlList(raw: string | undefined, name: string): string[] {
  const urls = (raw ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const url of urls) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new Error(`${name}: "${url}" is not an http(s) URL.`);
    }
  }
  return urls.map((u) => u.replace(/\/+$/, ''));
}

/** GATEHOUSE_REGION and STANDBY_REGIONS as one list without repeats; throws naming a bad region. */
function standbyRegions(own: string, more: string | undefined): string[] {
  const regions = [own];
  for (const region of (more ?? '').split(',').map((r) => r.trim())) {
    if (!region) continue;
    if (!STANDBY_REGION.test(region)) {
      throw new Error(
        `STANDBY_REGIONS: "${region}" is not a region name (1 to 32 characters of a-z, 0-9 or -).`,
      );
    }
    if (!regions.includes(region)) regions.push(region);
  }
  return regions;
}

import { alternativeSettings } from '@gatehouse/core/alternative';
import {
  type ClientAddressConfig,
  type HttpLimits,
  loadClientAddressConfig,
  loadHttpLimits,
} from '@gatehouse/core/http';
import { LOG_FORMATS } from '@gatehouse/core/logging';
import { DEFAULT_REGION, STANDBY_REGION } from '@gatehouse/core/standby-keys';
import { z } from 'zod';

/** KEYBOARD_POW_SECONDS' default: the main API's (api/src/challenges/priced-pow.ts; a test holds them equal). */
export const DEFAULT_KEYBOARD_POW_SECONDS = 4.5;

/** The standby's environment, parsed once; `.env.example` at the root lists every key. */
const schema = z.object({
  STANDBY_ROLE: z.enum(['bypass', 'fallback', 'both']).default('both'),
  STANDBY_HOST: z.string().default('127.0.0.1'),
  STANDBY_BYPASS_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  STANDBY_FALLBACK_PORT: z.coerce.number().int().min(0).max(65535).default(8082),
  STANDBY_INTERNAL_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  MAIN_API_URL: z.url().default('http://127.0.0.1:8080'),
  STANDBY_DATA_DIR: z.string().default('.gatehouse-data/standby'),
  STANDBY_STORE_URL: z.string().optional(),
  STANDBY_SYNC_TOKEN: z.string().optional(),
  STANDBY_WIDGET_SOURCE_URL: z.url().optional(),
  GATEHOUSE_REGION: z
    .string()
    .regex(STANDBY_REGION, 'GATEHOUSE_REGION must be 1 to 32 characters of a-z, 0-9 or -')
    .default(DEFAULT_REGION),
  STANDBY_PROBE_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  STANDBY_PROBE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(800),
  STANDBY_FAIL_AFTER: z.coerce.number().int().min(1).max(100).default(3),
  STANDBY_RECOVER_AFTER: z.coerce.number().int().min(1).max(100).default(3),
  STANDBY_SNAPSHOT_INTERVAL_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  // The keyboard path's proof-of-work price, as the main API's (api/src/challenges/priced-pow.ts).
  KEYBOARD_POW_SECONDS: z.coerce.number().min(0.05).max(60).default(DEFAULT_KEYBOARD_POW_SECONDS),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(LOG_FORMATS).default('auto'),
});

export type StandbyConfig = {
  role: 'bypass' | 'fallback' | 'both';
  host: string;
  bypassPort: number;
  fallbackPort: number;
  /** Where `/internal/v1/mode` is served alone (no Ingress routes it); unset: on the role ports too. */
  internalPort: number | undefined;
  mainApiUrl: string;
  /** Where the widget files are copied from (the main API's public /widget/); default MAIN_API_URL. */
  widgetSourceUrl: string;
  dataDir: string;
  storeUrl: string | undefined;
  /**
   * The sync credential: for the main API's snapshot endpoint and the operator's mode override. Unset:
   * the one the main API generated on this machine (DATA_DIR/standby-sync-token). Never the admin token.
   */
  syncToken: string | undefined;
  /** Which region this standby serves: its signing key and its outage log are the region's own. */
  region: string;
  probe: { intervalMs: number; timeoutMs: number; failAfter: number; recoverAfter: number };
  snapshotIntervalMs: number;
  /** Header, request and keep-alive timeouts and the connection cap of each listener (HTTP_*, as the API). */
  http: HttpLimits;
  /** Who the client is behind the proxies the deployment declares (TRUSTED_PROXIES). */
  clientAddress: ClientAddressConfig;
  /** ALTERNATIVE_POW_SECONDS: the accessible alternative's base price, as on the main API (docs/accessibility.md). */
  alternativeSeconds: number;
  /** KEYBOARD_POW_SECONDS: what an image answered with the keyboard pays beside it, as on the main API. */
  keyboardSeconds: number;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  /** auto: readable in a terminal, JSON otherwise. */
  logFormat: z.infer<typeof schema>['LOG_FORMAT'];
};

export function loadStandbyConfig(env: NodeJS.ProcessEnv = process.env): StandbyConfig {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid standby configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = result.data;
  return {
    role: e.STANDBY_ROLE,
    host: e.STANDBY_HOST,
    bypassPort: e.STANDBY_BYPASS_PORT,
    fallbackPort: e.STANDBY_FALLBACK_PORT,
    internalPort: e.STANDBY_INTERNAL_PORT,
    mainApiUrl: e.MAIN_API_URL.replace(/\/+$/, ''),
    widgetSourceUrl: (e.STANDBY_WIDGET_SOURCE_URL ?? e.MAIN_API_URL).replace(/\/+$/, ''),
    dataDir: e.STANDBY_DATA_DIR,
    storeUrl: e.STANDBY_STORE_URL || undefined,
    syncToken: e.STANDBY_SYNC_TOKEN || undefined,
    region: e.GATEHOUSE_REGION,
    probe: {
      intervalMs: e.STANDBY_PROBE_INTERVAL_MS,
      timeoutMs: e.STANDBY_PROBE_TIMEOUT_MS,
      failAfter: e.STANDBY_FAIL_AFTER,
      recoverAfter: e.STANDBY_RECOVER_AFTER,
    },
    snapshotIntervalMs: e.STANDBY_SNAPSHOT_INTERVAL_MS,
    http: loadHttpLimits(env),
    clientAddress: loadClientAddressConfig(env),
    alternativeSeconds: alternativeSettings(env).baseSeconds,
    keyboardSeconds: e.KEYBOARD_POW_SECONDS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

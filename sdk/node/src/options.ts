import { GatehouseConfigError } from './errors.ts';

export interface GatehouseOptions {
  /** The app's public key (`ak_...`). */
  appKey: string;
  /** The app's secret (`sk_...`): server-side only, never in a browser or a repository. */
  appSecret: string;
  /** The main API's base URL. Default http://127.0.0.1:8080 (`npm start`). */
  baseUrl?: string;
  /** A fetch implementation (tests, proxies, instrumentation). Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** Time allowed for one attempt, answer body included. Default 5000. */
  timeoutMs?: number;
  /** Retries after a network error or a 5xx. Default 2. */
  maxRetries?: number;
  /**
   * The backup API hosts (`fallbackapiv1.` hosts) that validate `offline_` tokens while the main API is
   * down. Leave it unset: the SDK asks the main API (`GET /v1/standby`) on first use. `[]` turns the
   * backup hosts off (offline_ tokens then go to the main API only). For tests and unusual networks.
   */
  backupServers?: string[];
}

export interface ResolvedOptions {
  appKey: string;
  appSecret: string;
  baseUrl: string;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
  maxRetries: number;
  /** Given backup hosts, or null: discover them with GET /v1/standby. */
  backupServers: string[] | null;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
const KNOWN = ['appKey', 'appSecret', 'baseUrl', 'fetch', 'timeoutMs', 'maxRetries', 'backupServers'];
/** Standby hosts begin with these labels (spec): they are not an alternative API. */
const STANDBY_LABELS = ['bypass.', 'fallbackapiv1.'];

/** Checks every option once, at construction, throwing one precise sentence for the first mistake. */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    fail('options must be an object: new Gatehouse({ appKey, appSecret }).');
  }
  const o = options as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !KNOWN.includes(k));
  if (unknown.length) fail(`unknown option ${unknown[0]}; the options are ${KNOWN.join(', ')}.`);

  const appKey = credential(o.appKey, 'appKey', "the app's public key, ak_...");
  const appSecret = credential(o.appSecret, 'appSecret', "the app's secret, sk_...");
  if (appKey.startsWith('sk_') && appSecret.startsWith('ak_')) {
    fail('appKey and appSecret are swapped: appKey is the public ak_... value, appSecret the sk_... one.');
  }
  if (appKey.startsWith('sk_'))
    fail('appKey starts with sk_: that is a secret; appKey is the public ak_... key.');

  const fetchImpl = o.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    fail('fetch must be a function (globalThis.fetch, undici.fetch or a wrapper of one).');
  }
  return {
    appKey,
    appSecret,
    baseUrl: baseUrl(o.baseUrl ?? DEFAULT_BASE_URL),
    fetch: fetchImpl as typeof globalThis.fetch,
    timeoutMs: integer(o.timeoutMs ?? 5_000, 'timeoutMs', 1, 600_000),
    maxRetries: integer(o.maxRetries ?? 2, 'maxRetries', 0, 10),
    backupServers: o.backupServers === undefined ? null : serverList(o.backupServers, 'backupServers'),
  };
}

/** A list of standby base URLs (`backupServers`, `bypassServers`): http(s), no query, at most 8. */
export function serverList(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || value.length > 8 || value.some((v) => typeof v !== 'string')) {
    fail(`${name} must be an array of at most 8 URLs such as ['https://fallbackapiv1.example.com'].`);
  }
  return (value as string[]).map((v) => {
    const url = URL.canParse(v) ? new URL(v) : null;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
      fail(`${name} holds '${v}', which is not an http:// or https:// URL without a query string.`);
    }
    return url.href.replace(/\/+$/, '');
  });
}

function fail(sentence: string): never {
  throw new GatehouseConfigError(`Gatehouse: ${sentence}`);
}

function credential(value: unknown, name: string, what: string): string {
  if (value === undefined || value === null || value === '') fail(`${name} is required (${what}).`);
  if (typeof value !== 'string') fail(`${name} must be a string (${what}); got ${typeof value}.`);
  if (/\s/.test(value)) {
    fail(`${name} contains whitespace: a trailing newline from a file or an environment variable?`);
  }
  if (value.length > 256)
    fail(`${name} is ${value.length} characters long; Gatehouse credentials are under 100.`);
  return value;
}

function baseUrl(value: unknown): string {
  const shown = typeof value === 'string' ? `'${value}'` : typeof value;
  const must = `baseUrl must be an http:// or https:// URL such as https://gatehouse.example.com; got ${shown}.`;
  if (typeof value !== 'string') fail(must);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(must);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(must);
  if (url.search || url.hash) fail(`baseUrl must not carry a query string or a fragment; got '${value}'.`);
  if (url.username || url.password) fail('baseUrl must not carry credentials: use appKey and appSecret.');
  if (STANDBY_LABELS.some((label) => url.hostname.startsWith(label))) {
    fail(
      `baseUrl points at a standby host (${url.hostname}); set it to the main API's base URL. Standby hosts ` +
        'are not an alternative API: they answer service_online while the main API is up.',
    );
  }
  return url.href.replace(/\/+$/, '');
}

function integer(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(`${name} must be a whole number from ${min} to ${max}; got ${String(value)}.`);
  }
  return value;
}

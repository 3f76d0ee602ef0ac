import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readServerFile, SERVER_FILE } from '../server-file.ts';
import { UsageError } from './errors.ts';
import { DEFAULT_DATA_DIR, findLocalData } from './local-data.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';
/** The urlSource of DEFAULT_URL: nothing said where the API is. */
export const DEFAULT_SOURCE = 'the default';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Where a command goes: the admin API's URL and token, and the local data folder. */
export interface Target {
  url: string;
  /** Where the URL came from, for messages: --url, GATEHOUSE_URL, DATA_DIR/server.json or the default. */
  urlSource: string;
  /**
   * Whether a refused connection may fall back to opening the database directly: only when no --url
   * was given, the URL is on this machine, and there is a database to open that someone asked for
   * (DATABASE_URL, a named DATA_DIR) or that already exists; never a new one in a folder found by chance.
   */
  fallbackAllowed: boolean;
  adminToken: string | undefined;
  /** Where the token came from, for error messages (never the token itself). */
  tokenSource: string | undefined;
  /** DATA_DIR, absolute; undefined when no data folder was found (outside any checkout). */
  dataDir: string | undefined;
  /** The folder relative settings are resolved from (the one the server starts in). */
  baseDir: string;
  /** The shell's environment over the checkout's .env: what the server started there reads. */
  env: NodeJS.ProcessEnv;
  /** Where the command looked for a running server, for the message when it finds none. */
  searched: string;
}

export interface TargetFlags {
  url?: string | undefined;
  'admin-token'?: string | undefined;
}

/**
 * Resolves the target from flags, then the environment, then the server running on the data folder found
 * from the working folder (its DATA_DIR/server.json), then the default; the token from flags, environment,
 * DATA_DIR/admin-token.
 */
export function resolveTarget(flags: TargetFlags, shellEnv: NodeJS.ProcessEnv, cwd: string): Target {
  const local = findLocalData(shellEnv, cwd);
  const env = { ...local?.envFile, ...shellEnv };
  const dataDir = local?.dataDir;
  const [raw, urlSource] = (() => {
    if (flags.url !== undefined) return [flags.url, '--url'];
    if (env.GATEHOUSE_URL) return [env.GATEHOUSE_URL, 'GATEHOUSE_URL'];
    const running = dataDir ? readServerFile(dataDir) : undefined;
    if (running) return [running.url, join(dataDir!, SERVER_FILE)];
    return [DEFAULT_URL, DEFAULT_SOURCE];
  })();
  const url = parseUrl(raw, urlSource);
  const token = adminToken(flags, env, dataDir);
  const databaseAsked = Boolean(env.DATABASE_URL) || Boolean(local?.named);
  const databaseExists =
    dataDir !== undefined && existsSync(join(pgliteDir(env, dataDir, local!.baseDir), 'PG_VERSION'));
  return {
    url: url.href.replace(/\/+$/, ''),
    urlSource,
    fallbackAllowed:
      flags.url === undefined && LOOPBACK.has(url.hostname) && (databaseAsked || databaseExists),
    adminToken: token?.value,
    tokenSource: token?.source,
    dataDir,
    baseDir: local?.baseDir ?? cwd,
    env,
    searched: dataDir
      ? `no server is recorded in ${join(dataDir, SERVER_FILE)}`
      : `no Gatehouse checkout or ${DEFAULT_DATA_DIR} folder in ${resolve(cwd)} or any folder above`,
  };
}

/** Where the embedded database of this data folder lives (PGLITE_DIR, else DATA_DIR/pgdata). */
function pgliteDir(env: NodeJS.ProcessEnv, dataDir: string, baseDir: string): string {
  return env.PGLITE_DIR ? resolve(baseDir, env.PGLITE_DIR) : join(dataDir, 'pgdata');
}

function parseUrl(raw: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${source} must be an http:// or https:// URL; got '${raw}'.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${source} must be an http:// or https:// URL; got '${raw}'.`);
  }
  return url;
}

function adminToken(flags: TargetFlags, env: NodeJS.ProcessEnv, dataDir: string | undefined) {
  if (flags['admin-token']) return { value: flags['admin-token'], source: '--admin-token' };
  if (env.GATEHOUSE_ADMIN_TOKEN) return { value: env.GATEHOUSE_ADMIN_TOKEN, source: 'GATEHOUSE_ADMIN_TOKEN' };
  const file = dataDir && join(dataDir, 'admin-token');
  if (file && existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), source: file };
  return undefined;
}

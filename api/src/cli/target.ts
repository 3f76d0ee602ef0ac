import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readServerFile, SERVER_FILE } from '../server-file.ts';
import { UsageError } from './errors.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Where a command goes: the admin API's URL and token, and the local data folder. */
export interface Target {
  url: string;
  /** Where the URL came from, for messages: --url, GATEHOUSE_URL, DATA_DIR/server.json or the default. */
  urlSource: string;
  /**
   * Whether a refused connection may fall back to opening the database directly: only when no --url
   * was given and the URL is on this machine, whose DATA_DIR (or DATABASE_URL) is then the database.
   */
  fallbackAllowed: boolean;
  adminToken: string | undefined;
  /** Where the token came from, for error messages (never the token itself). */
  tokenSource: string | undefined;
  /** DATA_DIR, absolute. */
  dataDir: string;
}

export interface TargetFlags {
  url?: string | undefined;
  'admin-token'?: string | undefined;
}

/**
 * Resolves the target from flags, then the environment, then the server running on this DATA_DIR
 * (its DATA_DIR/server.json), then the default; the token from flags, environment, DATA_DIR/admin-token.
 */
export function resolveTarget(flags: TargetFlags, env: NodeJS.ProcessEnv, cwd: string): Target {
  const fromFlag = flags.url !== undefined;
  const dataDir = resolve(cwd, env.DATA_DIR || '.gatehouse-data');
  const [raw, urlSource] = (() => {
    if (flags.url !== undefined) return [flags.url, '--url'];
    if (env.GATEHOUSE_URL) return [env.GATEHOUSE_URL, 'GATEHOUSE_URL'];
    const running = readServerFile(dataDir);
    if (running) return [running.url, join(dataDir, SERVER_FILE)];
    return [DEFAULT_URL, 'the default'];
  })();
  const url = parseUrl(raw, urlSource);
  const token = adminToken(flags, env, dataDir);
  return {
    url: url.href.replace(/\/+$/, ''),
    urlSource,
    fallbackAllowed: !fromFlag && LOOPBACK.has(url.hostname),
    adminToken: token?.value,
    tokenSource: token?.source,
    dataDir,
  };
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

function adminToken(flags: TargetFlags, env: NodeJS.ProcessEnv, dataDir: string) {
  if (flags['admin-token']) return { value: flags['admin-token'], source: '--admin-token' };
  if (env.GATEHOUSE_ADMIN_TOKEN) return { value: env.GATEHOUSE_ADMIN_TOKEN, source: 'GATEHOUSE_ADMIN_TOKEN' };
  const file = join(dataDir, 'admin-token');
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), source: file };
  return undefined;
}

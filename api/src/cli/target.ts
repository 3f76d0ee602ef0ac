import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from './errors.ts';

export const DEFAULT_URL = 'http://127.0.0.1:8080';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Where a command goes: the admin API's URL and token, and the local data folder. */
export interface Target {
  url: string;
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

/** Resolves the target from flags, then the environment, then the defaults and DATA_DIR/admin-token. */
export function resolveTarget(flags: TargetFlags, env: NodeJS.ProcessEnv, cwd: string): Target {
  const fromFlag = flags.url !== undefined;
  const raw = flags.url ?? (env.GATEHOUSE_URL || DEFAULT_URL);
  const url = parseUrl(raw, fromFlag ? '--url' : 'GATEHOUSE_URL');
  const dataDir = resolve(cwd, env.DATA_DIR || '.gatehouse-data');
  const token = adminToken(flags, env, dataDir);
  return {
    url: url.href.replace(/\/+$/, ''),
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

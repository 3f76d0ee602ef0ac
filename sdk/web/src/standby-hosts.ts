/**
 * Where the standby (bypass) hosts are, best source first: the `bypassServers` option; the list the API
 * embeds in the gatehouse.js it serves (api/src/routes/widget.ts); the answer of `GET {main}/v1/standby`,
 * fetched once the main API answered and kept in memory and in localStorage (so a page opened during an
 * outage still knows where to go).
 */
import { request, trimBase } from './transport.ts';

/** The global the served loader's first statement sets: `window.__gatehouseConfig1 = {bypass: [...]}`. */
export const CONFIG_GLOBAL = '__gatehouseConfig1';
/** localStorage key prefix; the main API's base URL follows. */
export const STORAGE_PREFIX = 'gatehouse.standby:';
/** A stored list older than this is fetched again (it is still used until then, and while that fails). */
export const REFRESH_MS = 3_600_000;
const MAX_HOSTS = 8;

export type HostSource = 'option' | 'served' | 'discovered' | 'none';

/** Only absolute http(s) URLs, without trailing slashes, at most MAX_HOSTS; anything else is dropped. */
export function cleanHosts(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const hosts: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || !/^https?:\/\/[^\s]+$/i.test(item)) continue;
    const host = trimBase(item);
    if (!hosts.includes(host)) hosts.push(host);
  }
  return hosts.slice(0, MAX_HOSTS);
}

/** The list embedded by the API that served gatehouse.js, read once while the loader runs. */
export function readServed(scope: object = globalThis): string[] {
  const config = (scope as Record<string, unknown>)[CONFIG_GLOBAL] as { bypass?: unknown } | undefined;
  return cleanHosts(config?.bypass);
}
const served = readServed();

/** localStorage, or nothing where it is missing or refused (private modes, sandboxed frames). */
function storage(): Storage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

interface Stored {
  bypass: string[];
  at: number;
}
const memory = new Map<string, Stored>();

function stored(main: string, store: Storage | undefined): Stored | undefined {
  const known = memory.get(main);
  if (known) return known;
  try {
    const parsed = JSON.parse(store?.getItem(STORAGE_PREFIX + main) ?? 'null') as Stored | null;
    if (!parsed) return undefined;
    const entry = { bypass: cleanHosts(parsed.bypass), at: Number(parsed.at) || 0 };
    memory.set(main, entry);
    return entry;
  } catch {
    return undefined;
  }
}

/** The standby hosts for `main`, and where the list came from. */
export function standbyHosts(
  main: string,
  option: string[] | undefined,
  store: Storage | undefined = storage(),
  servedList: string[] = served,
): { hosts: string[]; source: HostSource } {
  if (option?.length) return { hosts: cleanHosts(option), source: 'option' };
  if (servedList.length) return { hosts: servedList, source: 'served' };
  const known = stored(main, store);
  return known?.bypass.length ? { hosts: known.bypass, source: 'discovered' } : { hosts: [], source: 'none' };
}

const asked = new Set<string>();

/**
 * After the main API answered: fetches its standby list when nothing better is known and the stored one
 * is missing or old; once per page and main API. Never throws (a failed discovery changes nothing).
 */
export async function discover(
  main: string,
  source: HostSource,
  store: Storage | undefined = storage(),
  now = Date.now(),
): Promise<void> {
  if (source === 'option' || source === 'served' || asked.has(main)) return;
  const known = stored(main, store);
  if (known && now - known.at < REFRESH_MS) return;
  asked.add(main);
  try {
    const data = await request<{ bypass?: unknown }>(
      `${trimBase(main)}/v1/standby`,
      undefined,
      undefined,
      5000,
    );
    const entry = { bypass: cleanHosts(data?.bypass), at: now };
    memory.set(main, entry);
    store?.setItem(STORAGE_PREFIX + main, JSON.stringify(entry));
  } catch {}
}

/** Forgets what this page learnt (tests). */
export function forgetStandbyHosts(): void {
  memory.clear();
  asked.clear();
}

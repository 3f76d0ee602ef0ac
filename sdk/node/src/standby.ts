import { parseEnvelope, USER_AGENT } from './transport.ts';

/**
 * Where the standby hosts are, as the main API publishes them (`GET /v1/standby`, docs/protocol.md):
 * `bypass` (end-user side: offline verification, `offline_` tokens) and `fallback` (server side:
 * `POST /api/validate`). Integrations never configure them; the SDK asks on first contact, while the main
 * API is up, which is when it can answer: by the time an outage comes the lists are already known.
 */

export interface StandbyLists {
  bypass: string[];
  fallback: string[];
}

/** A discovered list is fetched again (on a later call, while the main API answers) after this long. */
export const DISCOVERY_TTL_MS = 10 * 60_000;
/** After a discovery that got no usable answer, the next one waits this long. */
export const DISCOVERY_RETRY_MS = 30_000;
/** At most this many hosts per role are kept: two are deployed, a few more are tolerated. */
const MAX_HOSTS = 8;

export interface DirectoryConfig {
  baseUrl: string;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
  now?: () => number;
}

/** The standby lists of one main API: discovered once, kept, refreshed now and then; never an error. */
export class StandbyDirectory {
  readonly #config: DirectoryConfig;
  readonly #now: () => number;
  #lists: StandbyLists = { bypass: [], fallback: [] };
  #known = false;
  #fetchedAt = 0;
  #failedAt: number | null = null;
  #pending: Promise<void> | null = null;

  constructor(config: DirectoryConfig) {
    this.#config = config;
    this.#now = config.now ?? Date.now;
  }

  /** Whether an answer was had (the lists may still be empty: an API without standby hosts). */
  get known(): boolean {
    return this.#known;
  }

  /**
   * The lists to use now, discovering first when due: never known, or older than DISCOVERY_TTL_MS, and
   * no failed attempt in the last DISCOVERY_RETRY_MS. `duringOutage` (an `offline_` token, a failed main
   * API) uses a known list as it is: asking the main API first would cost a timeout for nothing.
   */
  async lists(duringOutage = false): Promise<StandbyLists> {
    // A discovery under way: the first one is waited for; a refresh is not, the known lists serve meanwhile.
    if (this.#pending) {
      if (!this.#known) await this.#pending;
      return this.#lists;
    }
    const now = this.#now();
    let due = !this.#known || now - this.#fetchedAt >= DISCOVERY_TTL_MS;
    if (this.#known && duringOutage) due = false;
    if (this.#failedAt !== null && now - this.#failedAt < DISCOVERY_RETRY_MS) due = false;
    if (due) {
      this.#pending = this.#discover().finally(() => {
        this.#pending = null;
      });
      await this.#pending;
    }
    return this.#lists;
  }

  /** One GET, no retries. A 404 is an API without the endpoint: no standby hosts. */
  async #discover(): Promise<void> {
    const { baseUrl, timeoutMs } = this.#config;
    let status: number;
    let text: string;
    try {
      const res = await this.#config.fetch(`${baseUrl}/v1/standby`, {
        method: 'GET',
        headers: { Accept: 'application/json', 'User-Agent': USER_AGENT },
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch {
      this.#failedAt = this.#now();
      return;
    }
    const envelope = parseEnvelope(text);
    if (status === 404) {
      this.#use({ bypass: [], fallback: [] });
    } else if (status === 200 && envelope?.code === 0) {
      this.#use({
        bypass: urls(envelope.data.bypass, baseUrl),
        fallback: urls(envelope.data.fallback, baseUrl),
      });
    } else {
      // A failed refresh keeps what was known: forgetting the hosts would hurt exactly during an outage.
      this.#failedAt = this.#now();
    }
  }

  #use(lists: StandbyLists) {
    this.#lists = lists;
    this.#known = true;
    this.#fetchedAt = this.#now();
    this.#failedAt = null;
  }
}

/** The http(s) URLs of a published list, without trailing slashes, never the main API itself. */
function urls(value: unknown, baseUrl: string): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || !URL.canParse(item)) continue;
    const url = new URL(item);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const base = url.href.replace(/\/+$/, '');
    if (base !== baseUrl && !out.includes(base)) out.push(base);
  }
  return out.slice(0, MAX_HOSTS);
}

/** Directories shared per fetch implementation and main API, so stateless callers discover once. */
const shared = new WeakMap<typeof globalThis.fetch, Map<string, StandbyDirectory>>();

export function sharedDirectory(config: DirectoryConfig): StandbyDirectory {
  let byBase = shared.get(config.fetch);
  if (!byBase) {
    byBase = new Map();
    shared.set(config.fetch, byBase);
  }
  let directory = byBase.get(config.baseUrl);
  if (!directory) {
    directory = new StandbyDirectory(config);
    byBase.set(config.baseUrl, directory);
  }
  return directory;
}

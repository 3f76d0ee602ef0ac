import { randomBytes } from 'node:crypto';
import { PREFIX } from '@gatehouse/core/tokens/prefix';
import { GatehouseError } from './errors.ts';
import {
  GatehouseChallengeError,
  type HostSolve,
  hostFailed,
  IMAGE_TIER_MESSAGE,
  type ProtocolInput,
  solveOnHost,
} from './headless-protocol.ts';
import { DEFAULT_BASE_URL, serverList } from './options.ts';
import { sharedDirectory } from './standby.ts';

export { GatehouseChallengeError, IMAGE_TIER_MESSAGE };

/**
 * Headless client: solves a challenge the way the web widget does (init, proof-of-work, submit) and
 * returns the pass token, for integrators' CI, load tests and failover drills. It passes only where the
 * app's policy gives the invisible tier: a test-mode app, or a risk policy whose thresholds put every
 * score there. It never attempts image challenges.
 *
 * Continuity, as the widget: the main API first, on every solve; when it really fails (no answer, a
 * timeout, a 5xx other than `service_online`) the standby's `bypass.` hosts in order, which answer
 * `offline_` tokens; when none of them can verify either, a client-side `co_` token.
 */

export interface SolveChallengeOptions {
  /** The main API's base URL. Default http://127.0.0.1:8080. */
  baseUrl?: string;
  /** The app's public key (`ak_...`); no secret is involved. */
  appKey: string;
  /** The scene (`login`...): the pass token is bound to it. */
  action: string;
  /** An `sct_` token from `issueServerToken`, for apps with server_token_required. */
  serverToken?: string;
  /** Reported as captcha_args.platform. Default `web`. */
  platform?: string;
  /** The page URL a browser would send (matters for apps with allowed domains). */
  referer?: string;
  deviceId?: string;
  fingerprint?: string;
  /** Aborts the requests and the proof-of-work. */
  signal?: AbortSignal;
  fetch?: typeof globalThis.fetch;
  /** Time allowed for each request. Default 10000. */
  timeoutMs?: number;
  /**
   * The standby's end-user hosts (`bypass.`). Leave it unset: they are discovered from the main API
   * (`GET /v1/standby`) on first contact and kept. `[]` turns the standby off.
   */
  bypassServers?: string[];
  /**
   * When neither the main API nor a bypass host can verify: resolve with a client-side `co_` token,
   * `route: 'client-only'` (true, the default, as the web widget completes), or throw the main API's
   * error (false). No server ever reports a `co_` token valid.
   */
  clientOnlyFallback?: boolean;
  /**
   * How long to keep going back and forth while the main API fails and a bypass host still answers
   * `service_online` (its probes have not yet seen the outage). Default 15000.
   */
  failoverWaitMs?: number;
}

/** Which path produced the token: the main API, the standby (`offline_`), or nobody (`co_`). */
export type SolveRoute = 'main' | 'standby' | 'client-only';

export interface SolvedChallenge {
  /** `pt_...` (main), `dg_...` (main, quota exhausted), `offline_...` (standby) or `co_...` (client-only). */
  passToken: string;
  /** `invisible`; `degraded` when no challenge was given; `client-only` when nothing could verify. */
  tier: 'invisible' | 'degraded' | 'client-only';
  degraded: boolean;
  /** A `co_` token: made here because no Gatehouse service could verify; never valid on a server. */
  clientOnly: boolean;
  route: SolveRoute;
  /** The base URL that issued the token; null for a `co_` token. */
  host: string | null;
  /** `ch_...`; null for a degraded or client-only token. */
  challengeId: string | null;
  /** Seconds the token stays valid (0 for a `co_` token). */
  expiresIn: number;
  /** Milliseconds spent on the proof-of-work (0 when degraded or client-only). */
  solveMs: number;
  /** Why the main API was left (`network_error: ...`); null on the main route. */
  mainFailure: string | null;
}

const DEFAULT_FAILOVER_WAIT_MS = 15_000;

/** Solves a challenge: the main API, else a bypass host, else (by default) a client-only token. */
export async function solveChallenge(options: SolveChallengeOptions): Promise<SolvedChallenge> {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const input: ProtocolInput = {
    ...options,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 10_000,
  };
  const given =
    options.bypassServers === undefined ? null : serverList(options.bypassServers, 'bypassServers');
  const directory = given
    ? null
    : sharedDirectory({ baseUrl, fetch: input.fetch, timeoutMs: input.timeoutMs });
  // Learn the standby hosts on first contact, beside the main API's init: no added latency, and known
  // by the time the main API fails.
  const discovery = directory?.lists(false).catch(() => undefined);
  const deadline = Date.now() + (options.failoverWaitMs ?? DEFAULT_FAILOVER_WAIT_MS);
  let mainError: unknown;
  for (let round = 0; ; round++) {
    // 1. The main API first, every time: the client is back on it as soon as it answers.
    try {
      return solved(await solveOnHost(baseUrl, input), 'main', baseUrl, null);
    } catch (error) {
      if (!hostFailed(error)) throw error;
      mainError = error;
    }
    // 2. It really failed: the bypass hosts, in order, each moving on only after a real failure.
    await discovery;
    const hosts = given ?? (await directory!.lists(true)).bypass;
    let online = false;
    for (const host of hosts) {
      try {
        return solved(await solveOnHost(host, input), 'standby', host, mainError);
      } catch (error) {
        if (error instanceof GatehouseError && error.code === 'service_online') {
          online = true;
          break;
        }
        if (!hostFailed(error)) throw error;
      }
    }
    // 3. service_online: the standby has not yet seen the outage. Back to the main API, a little later.
    const delay = Math.min(1_000, 100 * 2 ** round);
    if (!online || Date.now() + delay > deadline) break;
    await pause(delay, options.signal);
  }
  // 4. Nothing could verify: complete anyway, as the widget does, with a token no server accepts.
  if (options.clientOnlyFallback === false) throw mainError;
  return {
    passToken: `${PREFIX.clientOnly}${randomBytes(18).toString('base64url')}`,
    tier: 'client-only',
    degraded: false,
    clientOnly: true,
    route: 'client-only',
    host: null,
    challengeId: null,
    expiresIn: 0,
    solveMs: 0,
    mainFailure: describe(mainError),
  };
}

function solved(s: HostSolve, route: 'main' | 'standby', host: string, mainError: unknown): SolvedChallenge {
  return {
    ...s,
    degraded: s.tier === 'degraded',
    clientOnly: false,
    route,
    host,
    mainFailure: route === 'main' ? null : describe(mainError),
  };
}

function describe(error: unknown): string {
  return error instanceof GatehouseError ? `${error.code}: ${error.message}` : String(error);
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

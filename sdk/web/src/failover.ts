/**
 * The failover rules of docs/widget-failover.md as pure functions: what an error means, and where the
 * next attempt of a challenge initialization goes. route.ts carries them out.
 */
import { GatehouseError } from './transport.ts';

/** What a host's answer means for the route: an answer to report, a real failure, or "main is up". */
export type Verdict = 'answer' | 'failover' | 'online';

/**
 * Judges an error from a host. Failover only after a real failure: no answer (network error, timeout)
 * or a 5xx other than `service_online`. A 4xx is an answer, never a reason to switch.
 */
export function judge(error: unknown): Verdict {
  if (!(error instanceof GatehouseError)) return 'answer';
  if (error.code === 'service_online') return 'online';
  if (error.code === 'network_error' || error.code === 'timeout' || error.status >= 500) return 'failover';
  return 'answer';
}

/** Timeouts (ms) of one attempt. */
export const TIMEOUTS = {
  /** Challenge initialization on the main API. */
  main: 6000,
  /** The same while the main API failed lately in this page: a short probe, so outages cost little. */
  mainSuspect: 2500,
  /** The main API again after a standby said it is up: give it time. */
  mainConfirmed: 15_000,
  /** Challenge initialization on a standby host. */
  bypass: 6000,
  /** Answer submission, anywhere. */
  submit: 15_000,
};
/** How long "the main API failed lately" lasts. */
export const SUSPECT_MS = 60_000;
/** Rounds through the main API when standby hosts keep saying it is up while it fails from here. */
export const MAX_MAIN_ATTEMPTS = 4;
/** Pause before the main API is tried again after the first "it is up" (the standby's own probes lag). */
export const ONLINE_RETRY_DELAY_MS = 1500;

export interface Target {
  kind: 'main' | 'bypass';
  base: string;
  timeoutMs: number;
  /** Wait this long before the attempt. */
  delayMs: number;
}

export interface Attempt {
  target: Target;
  verdict: Exclude<Verdict, 'answer'>;
}

export interface PlanInput {
  main: string;
  /** The standby (bypass) hosts, best first. */
  bypass: string[];
  /** Where a misdirected apiServer should have pointed, when known (the origin that served the loader). */
  correctMain?: string;
  /** The main API failed within SUSPECT_MS in this page. */
  mainSuspect: boolean;
}

/**
 * The next attempt of one initialization, given the failed ones so far (oldest first):
 * - first, the main API (a short timeout when it failed lately);
 * - the main API failed: each standby host not yet tried since that attempt, in order;
 * - a standby host failed: the next one; none left: `client-only` (the widget completes with `co_`);
 * - a standby host said `service_online`: back to the main API at once (then after a pause), at most
 *   MAX_MAIN_ATTEMPTS times in all, then `client-only` (the main API is up, but not from this browser);
 * - the main API itself said `service_online`: apiServer names a standby host. Try the correct base once
 *   if it is known, else `misdirected` (reported as an error: only the integrator can fix it).
 */
export function nextTarget(input: PlanInput, attempts: Attempt[]): Target | 'client-only' | 'misdirected' {
  const mainAttempts = attempts.filter((a) => a.target.kind === 'main');
  const last = attempts[attempts.length - 1];
  const main = (base: string, timeoutMs: number, delayMs = 0): Target => ({
    kind: 'main',
    base,
    timeoutMs,
    delayMs,
  });
  if (!last) return main(input.main, input.mainSuspect ? TIMEOUTS.mainSuspect : TIMEOUTS.main);

  if (last.target.kind === 'main' && last.verdict === 'online') {
    const tried = new Set(mainAttempts.map((a) => a.target.base));
    return input.correctMain && !tried.has(input.correctMain)
      ? main(input.correctMain, TIMEOUTS.main)
      : 'misdirected';
  }
  if (last.target.kind === 'bypass' && last.verdict === 'online') {
    if (mainAttempts.length >= MAX_MAIN_ATTEMPTS) return 'client-only';
    const base = mainAttempts[mainAttempts.length - 1]?.target.base ?? input.main;
    const sawOnline = attempts.filter((a) => a.verdict === 'online').length;
    return main(base, TIMEOUTS.mainConfirmed, sawOnline > 1 ? ONLINE_RETRY_DELAY_MS : 0);
  }
  // A failure (main or bypass): the next standby host not tried since the last main attempt.
  let from = attempts.length - 1;
  while (from > 0 && attempts[from]?.target.kind !== 'main') from--;
  const tried = new Set(
    attempts
      .slice(from)
      .filter((a) => a.target.kind === 'bypass')
      .map((a) => a.target.base),
  );
  const host = input.bypass.find((h) => h !== input.main && !tried.has(h));
  return host ? { kind: 'bypass', base: host, timeoutMs: TIMEOUTS.bypass, delayMs: 0 } : 'client-only';
}

/** The standby hosts in the order to try them: the one that answered last first, then the others. */
export function bypassOrder(hosts: string[], lastGood: string | undefined): string[] {
  return lastGood && hosts.includes(lastGood) ? [lastGood, ...hosts.filter((h) => h !== lastGood)] : hosts;
}

/**
 * Where an apiServer that turned out to be a standby host should have pointed: the origin that served
 * gatehouse.js (the main API, or the integrator's proxy of it), unless that is the same host or a
 * standby host too.
 */
export function correctMain(apiServer: string, loaderOrigin: string, standby: string[]): string | undefined {
  const origin = (url: string) => {
    try {
      return new URL(url).origin;
    } catch {
      return url;
    }
  };
  const bad = new Set([apiServer, ...standby].map(origin));
  return bad.has(origin(loaderOrigin)) ? undefined : loaderOrigin;
}

/** Lifetime the widget gives a client-only token (it is never verified anywhere). */
export const CLIENT_ONLY_TTL_SECONDS = 300;

/** A client-only token: `co_` and 24 random bytes, base64url. No server ever reports it valid. */
export function clientOnlyToken(
  random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b),
) {
  const bytes = random(new Uint8Array(24));
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return `co_${btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

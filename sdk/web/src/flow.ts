import type { InitAnswer, SubmitAnswer } from '@gatehouse/core/challenges/wire';
import type { ImageChallenge, SubmitOutcome } from './contract.ts';
import { CLIENT_ONLY_TTL_SECONDS, clientOnlyToken, judge } from './failover.ts';
import { solvePow } from './pow.ts';
import type { Initialised, Route } from './route.ts';
import { GatehouseError } from './transport.ts';

/** A finished verification: the token for the page, and how long it lives. */
export interface Passed {
  token: string;
  expiresIn: number;
}

/** What one verification needs from its widget. */
export interface Session {
  /** Where requests go: the main API, or a standby host when it failed (route.ts). */
  route: Route;
  appKey: string;
  action: string;
  lang: string;
  /** Customer data bound to the token (Turnstile's `cdata`), echoed by the siteverify endpoints. */
  cdata?: string;
  signal: AbortSignal;
  /** Client signals, collected at the moment of each init. */
  signals(): Record<string, unknown>;
  /** The server token to present: the known one, or a fresh one when `fresh` (undefined: none). */
  serverToken(fresh: boolean): Promise<string | undefined>;
  progress(fraction: number): void;
  /**
   * Shows an image challenge (or replaces the one shown). The UI calls `submit` for each answer; the
   * returned promise rejects when the user closes the challenge.
   */
  showImage(
    image: ImageChallenge,
    submit: (answer: unknown) => Promise<SubmitOutcome>,
    message?: string,
    /** Seconds the challenge stays answerable. */
    expiresIn?: number,
  ): Promise<void>;
}

/** Server-token errors a fresh token from getServerToken can cure. */
const TOKEN_ERRORS = ['server_token_required', 'server_token_expired', 'server_token_exhausted'];
/** Errors after which the widget starts over with a new challenge instead of failing. */
const RESTART_ERRORS = ['challenge_expired', 'challenge_not_found', 'invalid_answer'];
/** Automatic restarts (without the user asking) before the error is reported. */
const MAX_RESTARTS = 3;

/** The challenge UI or the proof-of-work worker could not be loaded. */
const CHUNK_ERRORS = ['ui_failed', 'pow_failed'];

/** Completion when no host can run a verification: a client-only token (never valid on any server). */
const clientOnly = (): Passed => ({ token: clientOnlyToken(), expiresIn: CLIENT_ONLY_TTL_SECONDS });

/** A failure of the host (no answer, 5xx, service_online): start over, which may take another route. */
const rerouted = (error: unknown) => judge(error) !== 'answer';

async function initialise(s: Session): Promise<Initialised<InitAnswer>> {
  const send = (serverToken: string | undefined) =>
    s.route.init<InitAnswer>(
      {
        app_key: s.appKey,
        action: s.action,
        ...(serverToken ? { server_token: serverToken } : {}),
        platform: 'web',
        // The page without its query and fragment, which may hold secrets (reset links, session ids):
        // enough for captcha_args and the allowed-domains check.
        referer: (location.origin + location.pathname).slice(0, 2048),
        lang: s.lang,
        signals: s.signals(),
        ...(s.cdata ? { cdata: s.cdata } : {}),
      },
      s.signal,
    );
  const token = await s.serverToken(false);
  try {
    return await send(token);
  } catch (error) {
    if (!(error instanceof GatehouseError && TOKEN_ERRORS.includes(error.code))) throw error;
    const fresh = await s.serverToken(true);
    if (!fresh || fresh === token) throw error;
    return send(fresh);
  }
}

/**
 * One verification, start to token: init (with a fresh server token when needed), then by the answer:
 * degraded completes at once; invisible solves the proof-of-work and submits; image and hard show the
 * challenge (the proof-of-work runs meanwhile) and submit each answer. Spent or expired challenges start
 * over with a new one (up to MAX_RESTARTS times in a row without the user asking for it), and so do
 * host failures, which may move the next initialization to a standby host (route.ts). Nothing reachable,
 * or a standby challenge whose UI or worker cannot be loaded: a client-only `co_` token.
 */
export async function verify(s: Session): Promise<Passed> {
  let restarts = 0;
  /** Why the previous challenge was spent, shown with the next one. */
  const carry: { message?: string } = {};
  for (;;) {
    const route = await initialise(s);
    if ('clientOnly' in route) return clientOnly();
    const { data: init, base, standby } = route;
    if (init.mode === 'degraded') return { token: init.pass_token, expiresIn: init.expires_in };
    s.progress(0);
    // The round's own signal stops its worker when the round ends (a new challenge, or the widget is reset).
    const round = new AbortController();
    const stop = () => round.abort();
    s.signal.addEventListener('abort', stop);
    const pow =
      init.pow === undefined
        ? undefined
        : solvePow(init.pow, round.signal, s.progress, s.route.widgetHosts());
    pow?.catch(() => {});
    try {
      const passed = await play(s, base, init, pow, carry);
      if (passed) return passed;
      restarts = 0;
    } catch (error) {
      // The UI and the worker come from beside gatehouse.js, often the main API that is down right now.
      if (standby && error instanceof GatehouseError && CHUNK_ERRORS.includes(error.code)) {
        console.warn(`Gatehouse: ${error.message}: co_ token.`);
        return clientOnly();
      }
      if (
        !(error instanceof GatehouseError && (RESTART_ERRORS.includes(error.code) || rerouted(error))) ||
        ++restarts > MAX_RESTARTS
      ) {
        throw error;
      }
    } finally {
      s.signal.removeEventListener('abort', stop);
      stop();
    }
  }
}

/** Plays one challenge: the token, or null when the user needs a new challenge. */
async function play(
  s: Session,
  base: string,
  init: Extract<InitAnswer, { mode: 'challenge' }>,
  pow: Promise<unknown> | undefined,
  carry: { message?: string },
): Promise<Passed | null> {
  const post = <T>(step: string, extra?: object) =>
    s.route.submit<T>(
      base,
      { app_key: s.appKey, challenge_id: init.challenge_id, challenge: init.challenge, ...extra },
      s.signal,
      step,
    );
  const submit = async (answer?: unknown): Promise<Passed> => {
    const ok = await post<SubmitAnswer>('submit', {
      ...(pow ? { pow: await pow } : {}),
      ...(answer === undefined ? {} : { answer }),
    });
    return { token: ok.pass_token, expiresIn: ok.expires_in };
  };
  if (!init.image) return submit();

  const message = carry.message;
  carry.message = undefined;
  return new Promise<Passed | null>((resolve, reject) => {
    s.showImage(
      init.image as ImageChallenge,
      async (answer): Promise<SubmitOutcome> => {
        // A string names another step for this challenge (alternative): its data, as the UI asked.
        if (typeof answer === 'string') return post(answer);
        try {
          resolve(await submit(answer));
          return { type: 'ok' };
        } catch (error) {
          const e = error as GatehouseError;
          // A wrong answer included: every picture takes one answer, so the next try is a new challenge.
          if (RESTART_ERRORS.includes(e.code) || rerouted(e)) {
            carry.message = e.message;
            resolve(null);
            return { type: 'restart', message: e.message };
          }
          reject(error);
          throw error;
        }
      },
      message,
      init.expires_in,
    ).then(() => resolve(null), reject);
  });
}

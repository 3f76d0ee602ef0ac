import type { ImageChallenge, SubmitOutcome } from './contract.ts';
import { solvePow } from './pow.ts';
import { GatehouseError, post } from './transport.ts';

/** `data` of POST /v1/challenge/init (docs/protocol.md). */
type InitAnswer =
  | { mode: 'degraded'; pass_token: string; expires_in: number }
  | {
      mode: 'challenge';
      challenge_id: string;
      challenge: string;
      tier: 'invisible' | 'image' | 'hard';
      expires_in: number;
      pow?: unknown;
      image?: ImageChallenge;
    };

/** A finished verification: the token for the page, and how long it lives. */
export interface Passed {
  token: string;
  expiresIn: number;
}

/** What one verification needs from its widget. */
export interface Session {
  apiServer: string;
  appKey: string;
  action: string;
  lang: string;
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
  ): Promise<void>;
}

/** Server-token errors a fresh token from getServerToken can cure. */
const TOKEN_ERRORS = ['server_token_required', 'server_token_expired', 'server_token_exhausted'];
/** Errors after which the widget starts over with a new challenge instead of failing. */
const RESTART_ERRORS = ['challenge_expired', 'challenge_not_found', 'invalid_answer'];
/** Automatic restarts (without the user asking) before the error is reported. */
const MAX_RESTARTS = 3;

/** Attempts left according to an invalid_answer message ("… 1 attempt left", "no attempts left"). */
function attemptsLeft(message: string): number | undefined {
  const m = /(\d+|no) attempts? left/i.exec(message);
  return m ? (m[1] === 'no' ? 0 : Number(m[1])) : undefined;
}

async function initialise(s: Session): Promise<InitAnswer> {
  const send = (serverToken: string | undefined) =>
    post<InitAnswer>(
      s.apiServer,
      '/v1/challenge/init',
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
 * over with a new one (up to MAX_RESTARTS times in a row without the user asking for it).
 */
export async function verify(s: Session): Promise<Passed> {
  let restarts = 0;
  /** Why the previous challenge was spent, shown with the next one. */
  const carry: { message?: string } = {};
  for (;;) {
    const init = await initialise(s);
    if (init.mode === 'degraded') return { token: init.pass_token, expiresIn: init.expires_in };
    s.progress(0);
    // The round's own signal stops its worker when the round ends (a new challenge, or the widget is reset).
    const round = new AbortController();
    const stop = () => round.abort();
    s.signal.addEventListener('abort', stop);
    const pow = init.pow === undefined ? undefined : solvePow(init.pow, round.signal, s.progress);
    pow?.catch(() => {});
    try {
      const passed = await play(s, init, pow, carry);
      if (passed) return passed;
      restarts = 0;
    } catch (error) {
      if (
        !(error instanceof GatehouseError && RESTART_ERRORS.includes(error.code)) ||
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
  init: Extract<InitAnswer, { mode: 'challenge' }>,
  pow: Promise<unknown> | undefined,
  carry: { message?: string },
): Promise<Passed | null> {
  const submit = async (answer?: unknown): Promise<Passed> => {
    const ok = await post<{ pass_token: string; expires_in: number }>(
      s.apiServer,
      '/v1/challenge/submit',
      {
        app_key: s.appKey,
        challenge_id: init.challenge_id,
        challenge: init.challenge,
        ...(pow ? { pow: await pow } : {}),
        ...(answer === undefined ? {} : { answer }),
      },
      s.signal,
    );
    return { token: ok.pass_token, expiresIn: ok.expires_in };
  };
  if (!init.image) return submit();

  const message = carry.message;
  carry.message = undefined;
  return new Promise<Passed | null>((resolve, reject) => {
    s.showImage(
      init.image as ImageChallenge,
      async (answer): Promise<SubmitOutcome> => {
        try {
          resolve(await submit(answer));
          return { type: 'ok' };
        } catch (error) {
          const e = error as GatehouseError;
          if (e.code === 'invalid_answer' && attemptsLeft(e.message) !== 0)
            return { type: 'retry', message: e.message };
          if (RESTART_ERRORS.includes(e.code)) {
            carry.message = e.message;
            resolve(null);
            return { type: 'restart', message: e.message };
          }
          reject(error);
          throw error;
        }
      },
      message,
    ).then(() => resolve(null), reject);
  });
}

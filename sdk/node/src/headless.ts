import { nativeHasher, type Puzzle, solvePuzzle, wasmHasher } from '@gatehouse/core/pow';
import { errorFromAnswer, GatehouseError } from './errors.ts';
import { DEFAULT_BASE_URL } from './options.ts';
import { connectionError, parseEnvelope } from './transport.ts';

/**
 * Headless client: solves a challenge the way the web widget does (init, proof-of-work, submit) and
 * returns the pass token, for integrators' CI and load tests. It passes only where the app's policy gives
 * the invisible tier: a test-mode app, or a risk policy whose thresholds put every score there. It never
 * attempts image challenges.
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
  /** Time allowed for each of the two requests. Default 10000. */
  timeoutMs?: number;
}

export interface SolvedChallenge {
  /** `pt_...`, or `dg_...` when the app's quota is exhausted (then `degraded` is true). */
  passToken: string;
  /** `invisible`, or `degraded` when no challenge was given. */
  tier: 'invisible' | 'degraded';
  degraded: boolean;
  /** `ch_...`; null for a degraded token. */
  challengeId: string | null;
  /** Seconds the token stays valid. */
  expiresIn: number;
  /** Milliseconds spent on the proof-of-work (0 when degraded). */
  solveMs: number;
}

/** The challenge cannot be solved headlessly (an image tier), or the API answered outside the protocol. */
export class GatehouseChallengeError extends GatehouseError {
  override name = 'GatehouseChallengeError';
}

export const IMAGE_TIER_MESSAGE =
  "this app's policy gave the image tier; the headless solver passes only where the policy gives the invisible tier";

const HEADLESS_USER_AGENT = 'gatehouse-headless/0.1.0 (@gatehouse/node)';

/** Runs init → proof-of-work → submit against the real API and returns the pass token. */
export async function solveChallenge(options: SolveChallengeOptions): Promise<SolvedChallenge> {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const post = poster(baseUrl, options);
  // 1. Initialization: the server scores the request and chooses the tier.
  const init = await post('/v1/challenge/init', {
    app_key: options.appKey,
    action: options.action,
    platform: options.platform ?? 'web',
    ...(options.serverToken ? { server_token: options.serverToken } : {}),
    ...(options.referer ? { referer: options.referer } : {}),
    ...(options.deviceId ? { device_id: options.deviceId } : {}),
    ...(options.fingerprint ? { fingerprint: options.fingerprint } : {}),
  });
  // 2. Quota exhausted: the widget completes at once with the dg_ token, and so do we, flagged.
  if (init.mode === 'degraded' && typeof init.pass_token === 'string') {
    return {
      passToken: init.pass_token,
      tier: 'degraded',
      degraded: true,
      challengeId: null,
      expiresIn: Number(init.expires_in ?? 0),
      solveMs: 0,
    };
  }
  if (
    init.mode !== 'challenge' ||
    typeof init.challenge_id !== 'string' ||
    typeof init.challenge !== 'string'
  ) {
    throw unexpected(`${baseUrl}/v1/challenge/init answered outside the challenge protocol.`);
  }
  // 3. Only the invisible tier: a tier with an image needs a person.
  if (init.tier !== 'invisible' || init.image !== undefined) {
    throw new GatehouseChallengeError(`Gatehouse: ${IMAGE_TIER_MESSAGE} (tier: ${String(init.tier)}).`, {
      code: 'image_tier',
    });
  }
  // 4. The proof-of-work, with the native Argon2id where Node has it (byte-identical to the WASM one).
  const started = performance.now();
  let pow: { nonces: number[] };
  try {
    pow = await solvePuzzle(init.pow as Puzzle, {
      hasher: nativeHasher() ?? wasmHasher,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw unexpected(`The proof-of-work puzzle could not be solved: ${(err as Error).message}`);
  }
  const solveMs = Math.round(performance.now() - started);
  // 5. Submission: one solved challenge, one pass token.
  const submitted = await post('/v1/challenge/submit', {
    app_key: options.appKey,
    challenge_id: init.challenge_id,
    challenge: init.challenge,
    pow,
  });
  if (typeof submitted.pass_token !== 'string') {
    throw unexpected(`${baseUrl}/v1/challenge/submit answered without a pass_token.`);
  }
  return {
    passToken: submitted.pass_token,
    tier: 'invisible',
    degraded: false,
    challengeId: typeof submitted.challenge_id === 'string' ? submitted.challenge_id : init.challenge_id,
    expiresIn: Number(submitted.expires_in ?? 0),
    solveMs,
  };
}

/** POSTs JSON like the widget (no credentials); the success envelope's data, or the mapped error. */
function poster(baseUrl: string, options: SolveChallengeOptions) {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async function post(path: string, body: object): Promise<Record<string, unknown>> {
    const url = baseUrl + path;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await fetchImpl(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'User-Agent': HEADLESS_USER_AGENT,
        },
        body: JSON.stringify(body),
        signal,
      });
      text = await res.text();
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw connectionError(url, err, 1, timeoutMs);
    }
    const envelope = parseEnvelope(text);
    if (envelope?.code === 0) return envelope.data;
    throw errorFromAnswer({
      url,
      status: res.status,
      requestId: res.headers.get('x-request-id'),
      retryAfterSeconds: null,
      envelope,
    });
  };
}

function unexpected(message: string): GatehouseChallengeError {
  return new GatehouseChallengeError(message, { code: 'unexpected_response' });
}

import { nativeHasher, type Puzzle, solvePuzzle, wasmHasher } from '@gatehouse/core/pow';
import { errorFromAnswer, GatehouseError } from './errors.ts';
import { connectionError, parseEnvelope } from './transport.ts';

/**
 * The challenge protocol on one host, as the web widget speaks it (docs/protocol.md): init, proof-of-work,
 * submit. The same on the main API and on a standby `bypass.` host (which answers `offline_` tokens).
 * Which host to ask, and when to move on, is `headless.ts`'s business.
 */

/** What one init → proof-of-work → submit needs: the widget's fields and the transport settings. */
export interface ProtocolInput {
  appKey: string;
  action: string;
  serverToken?: string | undefined;
  platform?: string | undefined;
  referer?: string | undefined;
  deviceId?: string | undefined;
  fingerprint?: string | undefined;
  signal?: AbortSignal | undefined;
  fetch: typeof globalThis.fetch;
  timeoutMs: number;
}

export interface HostSolve {
  passToken: string;
  tier: 'invisible' | 'degraded';
  challengeId: string | null;
  expiresIn: number;
  solveMs: number;
}

/** The challenge cannot be solved headlessly (an image tier), or the API answered outside the protocol. */
export class GatehouseChallengeError extends GatehouseError {
  override name = 'GatehouseChallengeError';
}

export const IMAGE_TIER_MESSAGE =
  "this app's policy gave the image tier; the headless solver passes only where the policy gives the invisible tier";

const HEADLESS_USER_AGENT = 'gatehouse-headless/0.1.0 (@gatehouse/node)';

/** Runs init → proof-of-work → submit against one host and returns its pass token. */
export async function solveOnHost(baseUrl: string, input: ProtocolInput): Promise<HostSolve> {
  const post = poster(baseUrl, input);
  // 1. Initialization: the server scores the request and chooses the tier.
  const init = await post('/v1/challenge/init', {
    app_key: input.appKey,
    action: input.action,
    platform: input.platform ?? 'web',
    ...(input.serverToken ? { server_token: input.serverToken } : {}),
    ...(input.referer ? { referer: input.referer } : {}),
    ...(input.deviceId ? { device_id: input.deviceId } : {}),
    ...(input.fingerprint ? { fingerprint: input.fingerprint } : {}),
  });
  // 2. Quota exhausted: the widget completes at once with the dg_ token, and so do we, flagged.
  if (init.mode === 'degraded' && typeof init.pass_token === 'string') {
    return {
      passToken: init.pass_token,
      tier: 'degraded',
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
  // 3. Only the invisible tier: a tier with an image needs a person (the standby gives ordinary apps a slide).
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
      ...(input.signal ? { signal: input.signal } : {}),
    });
  } catch (err) {
    if (input.signal?.aborted) throw err;
    throw unexpected(`The proof-of-work puzzle could not be solved: ${(err as Error).message}`);
  }
  const solveMs = Math.round(performance.now() - started);
  // 5. Submission: one solved challenge, one pass token.
  const submitted = await post('/v1/challenge/submit', {
    app_key: input.appKey,
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
    challengeId: typeof submitted.challenge_id === 'string' ? submitted.challenge_id : init.challenge_id,
    expiresIn: Number(submitted.expires_in ?? 0),
    solveMs,
  };
}

/**
 * Whether an error means the host really failed (no answer, a timeout, a 5xx other than `service_online`),
 * so another host may be tried. A 4xx is an answer: the same request elsewhere would get it too.
 */
export function hostFailed(error: unknown): boolean {
  if (!(error instanceof GatehouseError)) return false;
  if (error.code === 'network_error' || error.code === 'timeout') return true;
  return error.status !== null && error.status >= 500 && error.code !== 'service_online';
}

/** POSTs JSON like the widget (no credentials); the success envelope's data, or the mapped error. */
function poster(baseUrl: string, input: ProtocolInput) {
  return async function post(path: string, body: object): Promise<Record<string, unknown>> {
    const url = baseUrl + path;
    const timeout = AbortSignal.timeout(input.timeoutMs);
    const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await input.fetch(url, {
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
      if (input.signal?.aborted) throw err;
      throw connectionError(url, err, 1, input.timeoutMs);
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

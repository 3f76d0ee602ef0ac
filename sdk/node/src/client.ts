import { randomUUID } from 'node:crypto';
import { MAX_TOKEN_LENGTH, PREFIX } from '@gatehouse/core/tokens/prefix';
import {
  type Answer,
  errorFromAnswer,
  GatehouseApiError,
  GatehouseConfigError,
  GatehouseConnectionError,
  type GatehouseError,
} from './errors.ts';
import { type GatehouseOptions, resolveOptions } from './options.ts';
import { StandbyDirectory } from './standby.ts';
import { Transport } from './transport.ts';
import {
  clientOnlyVerdict,
  refusedVerdict,
  TOKEN_ERRORS,
  type TokenErrorCode,
  type Verdict,
  verdictFromData,
} from './verdict.ts';

export interface ValidateOptions {
  /** The end user's IP from your inbound request: enables the consistency check (`clientIpCheck`). */
  clientIp?: string;
  /** The scene expected here (`login`): sets `verdict.accepted` by the spec's caller rule. */
  expectedAction?: string;
  /**
   * Makes retries of one validation safe: the API gives a retry carrying the same key the same verdict.
   * Generated once per call when omitted. If you pass one, make it unique per logical validation (your
   * inbound request's id): presenting a token again with the same key gets the same verdict again.
   */
  idempotencyKey?: string;
}

export interface IssueServerTokenOptions {
  /** The scene the challenge will be initialized for: the same action the widget uses. */
  action: string;
  /** Lifetime in seconds, 1 to 900. Default 300. */
  ttl?: number;
  /** How many challenge initializations may use it, 1 to 1000. Default 10. */
  maxUses?: number;
  /** Initialization from another IP is rejected. */
  bindIp?: string;
  bindDeviceId?: string;
  bindFingerprint?: string;
  /** Echoed as `uid` by validation of the pass token the challenge yields. */
  bindUid?: string;
}

export interface ServerToken {
  /** `sct_...`: hand it to the page, which gives it to the widget. */
  serverToken: string;
  /** Seconds. */
  expiresIn: number;
  /** Unix seconds. */
  issuedAt: number;
}

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
/** What an action can be (the API's rule): anything else is never sent as one. */
const ACTION = /^[A-Za-z0-9_.:-]{1,64}$/;
const VALIDATE_OPTIONS = ['clientIp', 'expectedAction', 'idempotencyKey'];
const ISSUE_OPTIONS = ['action', 'ttl', 'maxUses', 'bindIp', 'bindDeviceId', 'bindFingerprint', 'bindUid'];

/**
 * Gatehouse server SDK: construct once with the app's key and secret, then `validate` pass tokens from
 * your forms and, optionally, `issueServerToken` ahead of a challenge.
 */
export class Gatehouse {
  readonly #transport: Transport;

  constructor(options: GatehouseOptions) {
    const o = resolveOptions(options);
    const given = o.backupServers;
    const directory = given ? null : new StandbyDirectory(o);
    this.#transport = new Transport({
      ...o,
      backupHosts: async (duringOutage) => given ?? (await directory!.lists(duringOutage)).fallback,
    });
  }

  /** The main API's base URL this client talks to. */
  get baseUrl(): string {
    return this.#transport.baseUrl;
  }

  /**
   * Validates a pass token (POST /v1/validate) and consumes it. Whatever the end user sent, the answer is a
   * verdict: replayed, expired, unknown or forged tokens give `valid: false` with `errorCode`. `offline_`
   * tokens (minted by the standby during an outage) go to the backup API hosts first, then the main API.
   * Throws (GatehouseError) only when no verdict could be had: bad credentials, network, 5xx after retries.
   */
  async validate(passToken: string, options: ValidateOptions = {}): Promise<Verdict> {
    checkOptions(options, VALIDATE_OPTIONS, 'validate');
    const { clientIp, expectedAction, idempotencyKey } = options;
    optionalString(clientIp, 'clientIp');
    optionalString(expectedAction, 'expectedAction');
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(String(idempotencyKey))) {
      throw new GatehouseConfigError(
        'Gatehouse: idempotencyKey must be 1 to 128 characters of letters, digits, _ . : or -.',
      );
    }
    // 1. Untrusted input: a missing or oversized token is an answer, not a crash, and costs no request.
    const flags = { offline: false, clientOnly: false };
    if (typeof passToken !== 'string' || passToken === '' || passToken.length > MAX_TOKEN_LENGTH) {
      return refusedVerdict('token_not_found', flags, null);
    }
    // 2. Client-only tokens were made in a browser that reached no Gatehouse service: never verifiable.
    if (passToken.startsWith(PREFIX.clientOnly)) return clientOnlyVerdict();
    flags.offline = passToken.startsWith(PREFIX.offline);
    // 3. One key for every attempt of this call, on every host, so a retry after a lost answer gets the
    //    same verdict wherever it lands.
    const body: Record<string, string> = {
      pass_token: passToken,
      idempotency_key: idempotencyKey ?? `idem_${randomUUID()}`,
    };
    if (clientIp !== undefined) body.client_ip = clientIp;
    // The API checks the action too (token_action_mismatch); the verdict's `accepted` checks it here as well,
    // for hosts that do not (an older API, the standby's fallback). A string no token can carry as its
    // action is not sent: the API would refuse the request, and `accepted` is false for it anyway.
    if (expectedAction !== undefined && ACTION.test(expectedAction)) body.action = expectedAction;
    // 4. offline_: the backup hosts, then the main API; anything else: the main API (transport.ts).
    const route = await this.#transport.validationRoute(passToken);
    const answer = await this.#transport
      .send({ path: '/v1/validate', body: { json: body } }, route)
      .catch((error: unknown) => {
        throw unavailable(error) ?? error;
      });
    // 5. A success is a verdict; so are the token errors. Anything else throws.
    if (answer.envelope?.code === 0) {
      return verdictFromData(answer.envelope.data, flags, expectedAction, answer.requestId);
    }
    const code = answer.envelope?.code === -1 ? answer.envelope.error : null;
    if (code && (TOKEN_ERRORS as readonly string[]).includes(code)) {
      const details = answer.envelope?.code === -1 ? answer.envelope.data : undefined;
      return refusedVerdict(code as TokenErrorCode, flags, answer.requestId, details);
    }
    const error = errorFromAnswer(answer);
    throw unavailable(error) ?? error;
  }

  /**
   * Issues a server token (POST /v1/server/challenge/issue, form-urlencoded as the spec shows). A 429
   * `rate_limit_exceeded` is retried after the API's Retry-After, within `maxRetries` and at most 10 s a wait.
   */
  async issueServerToken(options: IssueServerTokenOptions): Promise<ServerToken> {
    checkOptions(options, ISSUE_OPTIONS, 'issueServerToken');
    if (typeof options.action !== 'string' || options.action === '') {
      throw new GatehouseConfigError(
        'Gatehouse: issueServerToken needs { action }, the scene such as login.',
      );
    }
    const form = new URLSearchParams({ action: options.action });
    const fields: [keyof IssueServerTokenOptions, string][] = [
      ['ttl', 'ttl'],
      ['maxUses', 'max_uses'],
      ['bindIp', 'bind_ip'],
      ['bindDeviceId', 'bind_device_id'],
      ['bindFingerprint', 'bind_fingerprint'],
      ['bindUid', 'bind_uid'],
    ];
    for (const [option, field] of fields) {
      const value = options[option];
      if (value === undefined) continue;
      const numeric = option === 'ttl' || option === 'maxUses';
      if (numeric ? !Number.isInteger(value) : typeof value !== 'string') {
        throw new GatehouseConfigError(
          `Gatehouse: issueServerToken's ${option} must be ${numeric ? 'a whole number' : 'a string'}.`,
        );
      }
      form.set(field, String(value));
    }
    await this.#transport.discover();
    const answer = await this.#transport.send({
      path: '/v1/server/challenge/issue',
      body: { form },
      retry: { retryRateLimited: true },
    });
    return serverToken(answer);
  }
}

/**
 * Gatehouse out of reach (no answer; a 502/503/504 other than service_online, from it or its proxy): the
 * token could not be checked, so the error says to have the page verify again (`reverify`).
 */
function unavailable(error: unknown): GatehouseError | undefined {
  const outage =
    error instanceof GatehouseConnectionError ||
    (error instanceof GatehouseApiError &&
      [502, 503, 504].includes(error.status ?? 0) &&
      error.code !== 'service_online');
  if (!outage) return undefined;
  const e = error as GatehouseError;
  e.reverify = true;
  return e;
}

function serverToken(answer: Answer): ServerToken {
  if (answer.envelope?.code !== 0) throw errorFromAnswer(answer);
  const d = answer.envelope.data;
  if (
    typeof d.server_token !== 'string' ||
    typeof d.expires_in !== 'number' ||
    typeof d.issued_at !== 'number'
  ) {
    throw new GatehouseApiError(`${answer.url} answered without server_token, expires_in and issued_at.`, {
      code: 'unexpected_response',
      status: answer.status,
      requestId: answer.requestId,
    });
  }
  return { serverToken: d.server_token, expiresIn: d.expires_in, issuedAt: d.issued_at };
}

function checkOptions(options: unknown, known: string[], method: string): void {
  if (typeof options !== 'object' || options === null) {
    throw new GatehouseConfigError(`Gatehouse: ${method}'s options must be an object.`);
  }
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length) {
    throw new GatehouseConfigError(
      `Gatehouse: unknown ${method} option ${unknown[0]}; the options are ${known.join(', ')}.`,
    );
  }
}

function optionalString(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'string') {
    throw new GatehouseConfigError(`Gatehouse: ${name} must be a string; got ${typeof value}.`);
  }
}

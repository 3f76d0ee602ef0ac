/** Context recorded when the challenge was solved (the spec's captcha_args), for logs and risk scoring. */
export interface CaptchaArgs {
  /** `web`, `android`, `ios`, `flutter`, `windows`...: open-ended. */
  platform: string;
  /** The end user's IP seen at solve time. */
  userIp: string;
  /** Solve page URL on web; null on native. */
  referer: string | null;
  /** Package or bundle id on native; null on web. */
  pkg: string | null;
  /** Unix seconds. */
  solvedAt: number;
  /** 0 (safe) to 100 (risky). */
  riskScore: number;
}

/** How the `clientIp` given to validate compared with the solve-time IP (same /24 or /48 is a match). */
export type ClientIpCheck = 'match' | 'mismatch' | 'unverifiable';

/**
 * The token answers that are verdicts, not exceptions. The API answers them with HTTP 200 and the code in
 * `data.error` too; older servers used 404/409/410, which are read the same way.
 */
export const TOKEN_ERRORS = [
  'token_already_used',
  'token_expired',
  'token_not_found',
  'token_action_mismatch',
  'client_ip_mismatch',
] as const;
export type TokenErrorCode = (typeof TOKEN_ERRORS)[number];

/** The answer to `validate`: a result, never an exception, whatever the end user sent. */
export interface Verdict {
  /** True only when the token verified and this call consumed it. Never true for `dg_` or `co_` tokens. */
  valid: boolean;
  /**
   * The spec's caller rule: `valid` AND `action === expectedAction` (when `expectedAction` was given).
   * Without `expectedAction` this is just `valid`: pass it, or call `isAccepted(verdict, action)`.
   */
  accepted: boolean;
  /** The scene bound into the token (`login`...); null when the token did not verify. */
  action: string | null;
  /** `ch_...`; null when the token did not verify. */
  challengeId: string | null;
  /** The uid bound through a server token's `bindUid`, else null. */
  uid: string | null;
  captchaArgs: CaptchaArgs | null;
  /** A `dg_` token: the app's quota is exhausted and the widget skipped verification. Never valid. */
  degraded: boolean;
  /** For a `dg_` token whose 5 minutes have passed. */
  expired: boolean;
  /** `quota_exhausted` (degraded), `client_ip_mismatch` (policy reject), `client_only` (a `co_` token), else null. */
  reason: string | null;
  /** An `offline_` token from the standby service. */
  offline: boolean;
  /** A `co_` token, made in the browser when no Gatehouse service answered: never verifiable, never valid. */
  clientOnly: boolean;
  /**
   * Why the token was refused: `token_already_used`, `token_expired`, `token_not_found`,
   * `token_action_mismatch` (solved for another action than `expectedAction`) or `client_ip_mismatch`
   * (the app's client_ip_policy is reject); else null.
   */
  errorCode: TokenErrorCode | null;
  /** Present when `clientIp` was given and the token verified. */
  clientIpCheck: ClientIpCheck | null;
  /** The API's request id for this validation; null when no request was made. */
  requestId: string | null;
}

/** The spec's caller rule: accept only a valid token minted for the scene expected here. */
export function isAccepted(verdict: Pick<Verdict, 'valid' | 'action'>, expectedAction: string): boolean {
  return verdict.valid === true && verdict.action === expectedAction;
}

export interface TokenFlags {
  offline: boolean;
  clientOnly: boolean;
}

function empty(flags: TokenFlags, requestId: string | null): Verdict {
  return {
    valid: false,
    accepted: false,
    action: null,
    challengeId: null,
    uid: null,
    captchaArgs: null,
    degraded: false,
    expired: false,
    reason: null,
    offline: flags.offline,
    clientOnly: flags.clientOnly,
    errorCode: null,
    clientIpCheck: null,
    requestId,
  };
}

/** A token refused with one of TOKEN_ERRORS; `data` is the envelope's data (the token's action, the IP check). */
export function refusedVerdict(
  code: TokenErrorCode,
  flags: TokenFlags,
  requestId: string | null,
  data: Record<string, unknown> = {},
): Verdict {
  const check = data.client_ip_check;
  return {
    ...empty(flags, requestId),
    errorCode: code,
    expired: code === 'token_expired',
    action: typeof data.action === 'string' ? data.action : null,
    reason: typeof data.reason === 'string' ? data.reason : null,
    clientIpCheck: check === 'match' || check === 'mismatch' || check === 'unverifiable' ? check : null,
  };
}

/** A `co_` token: nothing to ask the API, it could not verify it. */
export function clientOnlyVerdict(): Verdict {
  return { ...empty({ offline: false, clientOnly: true }, null), reason: 'client_only' };
}

/** The verdict from `data` of a successful POST /v1/validate (`pt_` form or `dg_` form). */
export function verdictFromData(
  data: Record<string, unknown>,
  flags: TokenFlags,
  expectedAction: string | undefined,
  requestId: string | null,
): Verdict {
  const verdict = empty(flags, requestId);
  verdict.valid = data.valid === true;
  verdict.degraded = data.degraded === true;
  verdict.offline = flags.offline || data.offline === true;
  verdict.expired = data.expired === true;
  verdict.reason = typeof data.reason === 'string' ? data.reason : null;
  verdict.action = typeof data.action === 'string' ? data.action : null;
  verdict.challengeId = typeof data.challenge_id === 'string' ? data.challenge_id : null;
  verdict.uid = data.uid === null || data.uid === undefined ? null : String(data.uid);
  verdict.captchaArgs = captchaArgs(data.captcha_args);
  const check = data.client_ip_check;
  verdict.clientIpCheck =
    check === 'match' || check === 'mismatch' || check === 'unverifiable' ? check : null;
  // Invariant 10 and the spec: whatever an answer says, client-only and degraded tokens are never valid.
  if (verdict.degraded || verdict.clientOnly) verdict.valid = false;
  verdict.accepted = expectedAction === undefined ? verdict.valid : isAccepted(verdict, expectedAction);
  return verdict;
}

function captchaArgs(raw: unknown): CaptchaArgs | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const a = raw as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    platform: text(a.platform) ?? '',
    userIp: text(a.user_ip) ?? '',
    referer: text(a.referer),
    pkg: text(a.pkg),
    solvedAt: typeof a.solved_at === 'number' ? a.solved_at : 0,
    riskScore: typeof a.risk_score === 'number' ? a.risk_score : 0,
  };
}

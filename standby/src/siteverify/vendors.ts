import type { ErrorCode } from '@gatehouse/core/errors';
import type { CaptchaArgs } from '@gatehouse/core/tokens';

/*
 * The three vendors' siteverify answers, from their public documentation: field names, error-code names,
 * and which fields each one sends. One Gatehouse outcome in, one vendor-shaped body out.
 */

export type Vendor = 'turnstile' | 'recaptcha' | 'hcaptcha';

/** What Gatehouse concluded, before it is dressed in a vendor's shape. */
export type Outcome =
  | { ok: true; verdict: AcceptedVerdict }
  | { ok: false; problems: Problem[]; degraded?: boolean };

export interface AcceptedVerdict {
  action: string;
  captcha_args: CaptchaArgs;
  cdata?: string | null | undefined;
  /**
   * The app is a test app (integrators' CI): its scores are the vendors' most passing values whatever the
   * browser looked like, so a backend keeping a vendor's usual threshold passes an automated browser.
   */
  test_mode?: boolean | undefined;
}

/** A reason for `success: false`, in Gatehouse's words; each vendor names it its own way. */
export type Problem =
  | 'missing-secret'
  | 'invalid-secret'
  | 'missing-response'
  | 'invalid-response'
  | 'already-used'
  | 'expired'
  | 'bad-request'
  | 'invalid-remoteip'
  | 'sitekey-mismatch'
  | 'internal-error';

/** Vendor error codes; reCAPTCHA and Turnstile fold used and expired into `timeout-or-duplicate`. */
const TURNSTILE_CODES: Record<Problem, string> = {
  'missing-secret': 'missing-input-secret',
  'invalid-secret': 'invalid-input-secret',
  'missing-response': 'missing-input-response',
  'invalid-response': 'invalid-input-response',
  'already-used': 'timeout-or-duplicate',
  expired: 'timeout-or-duplicate',
  'bad-request': 'bad-request',
  'invalid-remoteip': 'bad-request',
  'sitekey-mismatch': 'invalid-input-secret',
  'internal-error': 'internal-error',
};

const CODES: Record<Vendor, Record<Problem, string>> = {
  turnstile: TURNSTILE_CODES,
  // reCAPTCHA documents no code for its own failure; bad-request is the closest it has.
  recaptcha: { ...TURNSTILE_CODES, 'internal-error': 'bad-request' },
  hcaptcha: {
    'missing-secret': 'missing-input-secret',
    'invalid-secret': 'invalid-input-secret',
    'missing-response': 'missing-input-response',
    'invalid-response': 'invalid-input-response',
    'already-used': 'already-seen-response',
    expired: 'expired-input-response',
    'bad-request': 'bad-request',
    'invalid-remoteip': 'invalid-remoteip',
    'sitekey-mismatch': 'sitekey-secret-mismatch',
    'internal-error': 'bad-request',
  },
};

/** Gatehouse's verdict codes as siteverify problems. */
export function problemFor(code: ErrorCode): Problem {
  switch (code) {
    case 'token_already_used':
      return 'already-used';
    case 'token_expired':
      return 'expired';
    case 'token_not_found':
    case 'token_action_mismatch':
    case 'client_ip_mismatch':
      return 'invalid-response';
    case 'invalid_request':
    case 'payload_too_large':
    case 'unsupported_media_type':
      return 'bad-request';
    default:
      return 'internal-error';
  }
}

/** The vendor's JSON answer for an outcome. */
export function vendorAnswer(vendor: Vendor, outcome: Outcome): Record<string, unknown> {
  if (!outcome.ok) {
    const codes = [...new Set(outcome.problems.map((p) => CODES[vendor][p]))];
    return {
      success: false,
      'error-codes': codes,
      ...(vendor === 'turnstile' ? { messages: [] } : {}),
      // Not a vendor field: a quota-exhausted app's token, for backends that choose to let it through.
      ...(outcome.degraded ? { degraded: true } : {}),
    };
  }
  const { captcha_args: args, action, test_mode: testMode } = outcome.verdict;
  const solvedAt = new Date(args.solved_at * 1000).toISOString();
  // Turnstile's examples carry milliseconds; Google and hCaptcha document yyyy-MM-dd'T'HH:mm:ssZZ.
  const challengeTs = vendor === 'turnstile' ? solvedAt : solvedAt.replace(/\.\d{3}Z$/, 'Z');
  const hostname = hostOf(args.referer);
  const risk = testMode ? 0 : args.risk_score;
  switch (vendor) {
    case 'turnstile':
      return {
        success: true,
        'error-codes': [],
        challenge_ts: challengeTs,
        hostname: hostname ?? args.pkg ?? '',
        action,
        cdata: outcome.verdict.cdata ?? '',
        messages: [],
      };
    case 'recaptcha':
      return {
        success: true,
        challenge_ts: challengeTs,
        ...(args.pkg && !hostname ? { apk_package_name: args.pkg } : { hostname: hostname ?? '' }),
        // v3 reads these (1.0 very likely a human); v2 code ignores them.
        score: round2(1 - risk / 100),
        action,
      };
    case 'hcaptcha':
      return {
        success: true,
        challenge_ts: challengeTs,
        hostname: hostname ?? args.pkg ?? '',
        credit: false,
        // hCaptcha Enterprise's meaning: 0.0 safe, 1.0 very likely a bot.
        score: round2(risk / 100),
        score_reason: [],
      };
  }
}

function hostOf(referer: string | null): string | null {
  if (!referer) return null;
  try {
    return new URL(referer).hostname;
  } catch {
    return null;
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

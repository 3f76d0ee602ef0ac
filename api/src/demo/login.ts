import { timingSafeEqual } from 'node:crypto';
import { type Gatehouse, GatehouseError, type Verdict } from '@gatehouse/node';

/** The one account of the demo site, shown on its login page. */
export const DEMO_USER = { username: 'demo', password: 'gatehouse' } as const;
/** The scene the login form's widget uses and the backend expects. */
export const LOGIN_ACTION = 'login';
/** The hidden field the widget fills in the enclosing form (the widget's default `fieldName`). */
export const TOKEN_FIELD = 'gatehouse-token';

export type Outcome =
  | 'signed-in'
  | 'wrong-password'
  | 'rejected'
  | 'degraded'
  | 'client-only'
  | 'unavailable'
  /** Gatehouse could not be reached to check the token: the page verifies again. */
  | 'reverify';

export interface LoginResult {
  outcome: Outcome;
  status: number;
  title: string;
  message: string;
  verdict: Verdict | null;
}

const TOKEN_ERROR_TEXT: Record<string, string> = {
  token_already_used: 'this verification token was already used (a replay)',
  token_expired: 'this verification token has expired: verify again',
  token_not_found: 'this verification token is unknown, forged, or for another app',
  token_action_mismatch: 'this verification token was solved for another action',
  client_ip_mismatch: 'the token was solved from another network than this request',
};

/**
 * POST /login: 1. validate the widget's token with the server SDK (always first, so credential guessing
 * costs a verification), 2. apply the spec's caller rule, valid AND action === 'login', 3. only then
 * check the password. Degraded tokens (quota exhausted) are never valid: this demo's policy refuses them
 * and says so; a real site could let them through behind its own controls (rate limits, a second factor).
 */
export async function handleLogin(
  gatehouse: Gatehouse,
  form: URLSearchParams,
  clientIp: string | undefined,
): Promise<LoginResult> {
  const token = form.get(TOKEN_FIELD) ?? '';
  if (!token) {
    return result(
      'rejected',
      400,
      'Rejected',
      'No verification token was sent: the widget had not completed.',
      null,
    );
  }
  let verdict: Verdict;
  try {
    verdict = await gatehouse.validate(token, {
      expectedAction: LOGIN_ACTION,
      ...(clientIp ? { clientIp } : {}),
    });
  } catch (error) {
    // The main API is down: the token may be good but cannot be checked. The page verifies again through
    // the standby (Gatehouse.reverify) and sends the form once more with an offline_ token.
    if (error instanceof GatehouseError && error.reverify) {
      return result(
        'reverify',
        503,
        'Verify again',
        'The verification service is unavailable, so your verification could not be checked: verifying again.',
        null,
      );
    }
    // Fail closed: without a verdict nobody signs in. The error says why (credentials, network, 5xx).
    const why = error instanceof GatehouseError ? `${error.message} (${error.code})` : String(error);
    return result(
      'unavailable',
      503,
      'Verification unavailable',
      `The token could not be validated: ${why}`,
      null,
    );
  }
  return decide(verdict, checkPassword(form.get('username') ?? '', form.get('password') ?? ''));
}

/** The page to show for a verdict and a password check: the caller rule, then the credentials. */
export function decide(verdict: Verdict, passwordOk: boolean): LoginResult {
  if (verdict.degraded) {
    return result(
      'degraded',
      403,
      'Verification skipped (quota exhausted)',
      "The app's monthly quota is exhausted, so the widget skipped verification and sent a degraded token. " +
        'Degraded tokens never validate as true; this demo refuses them (a real site may accept them behind its own controls).',
      verdict,
    );
  }
  if (verdict.clientOnly) {
    return result(
      'client-only',
      403,
      'Verification unavailable (client-only token)',
      'No Gatehouse service was reachable from the browser; client-only tokens cannot be verified and this demo refuses them.',
      verdict,
    );
  }
  if (!verdict.valid) {
    const why = verdict.errorCode
      ? TOKEN_ERROR_TEXT[verdict.errorCode]
      : verdict.reason === 'client_ip_mismatch'
        ? 'the token was solved from another network than this request'
        : `the token is not valid${verdict.reason ? ` (${verdict.reason})` : ''}`;
    return result('rejected', 403, 'Rejected', `Rejected: ${why}.`, verdict);
  }
  if (!verdict.accepted) {
    return result(
      'rejected',
      403,
      'Rejected',
      `Rejected: this token was minted for the action '${verdict.action}', not '${LOGIN_ACTION}'.`,
      verdict,
    );
  }
  if (!passwordOk) {
    return result(
      'wrong-password',
      401,
      'Wrong username or password',
      'Verification passed, but the credentials are wrong.',
      verdict,
    );
  }
  return result(
    'signed-in',
    200,
    `Signed in as ${DEMO_USER.username}`,
    'Verification passed and the credentials are right.',
    verdict,
  );
}

/** Compares both fields in constant time (the demo's one account). */
export function checkPassword(username: string, password: string): boolean {
  const user = equal(username, DEMO_USER.username);
  const pass = equal(password, DEMO_USER.password);
  return user && pass;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function result(
  outcome: Outcome,
  status: number,
  title: string,
  message: string,
  verdict: Verdict | null,
): LoginResult {
  return { outcome, status, title, message, verdict };
}

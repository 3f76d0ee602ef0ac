import type { Verdict } from '@gatehouse/node';
import { describe, expect, it } from 'vitest';
import { checkPassword, decide } from './login.ts';
import { html, resultPage } from './pages.ts';

const base: Verdict = {
  valid: true,
  accepted: true,
  action: 'login',
  challengeId: 'ch_1',
  uid: null,
  captchaArgs: null,
  degraded: false,
  expired: false,
  reason: null,
  offline: false,
  clientOnly: false,
  errorCode: null,
  clientIpCheck: null,
  requestId: 'r',
};

describe('demo login decision', () => {
  it('signs in only for a valid token minted for login, then the right credentials', () => {
    expect(decide(base, true)).toMatchObject({ outcome: 'signed-in', status: 200 });
    expect(decide(base, false)).toMatchObject({ outcome: 'wrong-password', status: 401 });
  });

  it('a valid token for another action is rejected whatever the password', () => {
    const other = { ...base, action: 'register', accepted: false };
    expect(decide(other, true)).toMatchObject({ outcome: 'rejected', status: 403 });
    expect(decide(other, true).message).toContain("'register', not 'login'");
  });

  it.each([
    ['token_already_used', 'already used'],
    ['token_expired', 'expired'],
    ['token_not_found', 'unknown, forged'],
  ] as const)('%s is rejected with its reason', (errorCode, text) => {
    const result = decide({ ...base, valid: false, accepted: false, action: null, errorCode }, true);
    expect(result).toMatchObject({ outcome: 'rejected', status: 403 });
    expect(result.message).toContain(text);
  });

  it('degraded and client-only tokens are shown for what they are and refused', () => {
    const degraded = { ...base, valid: false, accepted: false, degraded: true, reason: 'quota_exhausted' };
    expect(decide(degraded, true)).toMatchObject({
      outcome: 'degraded',
      status: 403,
      title: 'Verification skipped (quota exhausted)',
    });
    const clientOnly = { ...base, valid: false, accepted: false, clientOnly: true, reason: 'client_only' };
    expect(decide(clientOnly, true)).toMatchObject({ outcome: 'client-only', status: 403 });
  });

  it('a client_ip mismatch under the reject policy is rejected', () => {
    const mismatch = { ...base, valid: false, accepted: false, reason: 'client_ip_mismatch' };
    expect(decide(mismatch, true).message).toContain('another network');
  });

  it('checks both credentials', () => {
    expect(checkPassword('demo', 'gatehouse')).toBe(true);
    expect(checkPassword('demo', 'gatehouse ')).toBe(false);
    expect(checkPassword('admin', 'gatehouse')).toBe(false);
  });

  it('escapes everything it shows', () => {
    expect(html(`<script>"x"&'y'</script>`)).toBe(
      '&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;',
    );
    const page = resultPage(decide({ ...base, action: '<img src=x>', accepted: false }, true));
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;img src=x&gt;');
  });
});

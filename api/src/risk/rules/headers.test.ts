import { describe, expect, it } from 'vitest';
import type { RequestFacts } from '../signals.ts';
import { headerRules } from './headers.ts';

const CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

const browser: RequestFacts = {
  ip: '203.0.113.9',
  userAgent: CHROME_UA,
  acceptLanguage: 'en-GB,en;q=0.9',
  secChUa: '"Chromium";v="131", "Not_A Brand";v="24"',
  secChUaMobile: '?0',
  secChUaPlatform: '"Linux"',
  platform: 'web',
};
const reasons = (facts: Partial<RequestFacts>) => headerRules({ ...browser, ...facts }).map((f) => f.reason);

describe('headerRules', () => {
  it('adds nothing for a consistent browser', () => {
    expect(headerRules(browser)).toEqual([]);
  });
  it('flags a missing User-Agent', () => {
    expect(reasons({ userAgent: '' })).toEqual(['headers.no_user_agent']);
  });
  it.each([
    'curl/8.5.0',
    'python-requests/2.32',
    'Mozilla/5.0 HeadlessChrome/131.0.0.0',
    'Go-http-client/1.1',
  ])('flags the automation User-Agent %s', (userAgent) => {
    expect(reasons({ userAgent, secChUa: '' })).toContain('headers.automation_user_agent');
  });
  it('flags a missing Accept-Language, or the `*` of HTTP libraries', () => {
    expect(reasons({ acceptLanguage: '' })).toEqual(['headers.no_accept_language']);
    expect(reasons({ acceptLanguage: '*' })).toEqual(['headers.no_accept_language']);
  });
  it('flags client hints sent by a browser claiming to be Firefox', () => {
    expect(reasons({ userAgent: FIREFOX_UA })).toContain('headers.client_hints_contradict_ua');
    expect(reasons({ userAgent: FIREFOX_UA, secChUa: '', secChUaMobile: '', secChUaPlatform: '' })).toEqual(
      [],
    );
  });
  it('flags a Chrome version that the client hints contradict', () => {
    expect(reasons({ secChUa: '"Chromium";v="120", "Not_A Brand";v="24"' })).toContain(
      'headers.client_hints_version_mismatch',
    );
  });
  it('flags a mobile hint on a desktop User-Agent and a platform hint that disagrees', () => {
    expect(reasons({ secChUaMobile: '?1' })).toContain('headers.mobile_hint_mismatch');
    expect(reasons({ secChUaPlatform: '"Windows"' })).toContain('headers.platform_hint_mismatch');
  });
  it('ignores headers on native platforms, whose SDKs send their own', () => {
    expect(headerRules({ ...browser, platform: 'android', userAgent: 'okhttp/4.12' })).toEqual([]);
  });
});

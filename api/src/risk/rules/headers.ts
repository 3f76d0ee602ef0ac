import type { RequestFacts, RiskFinding } from '../signals.ts';

const AUTOMATION_UA =
  /headlesschrome|phantomjs|puppeteer|playwright|selenium|python-requests|python-urllib|aiohttp|curl\/|wget\/|go-http-client|okhttp|java\/|libwww|scrapy|httpclient|node-fetch|axios\/|undici|^node$/i;

/**
 * Header consistency, web platform only (native SDKs send their own User-Agent): a missing or
 * automation User-Agent, client hints that contradict it, no Accept-Language.
 */
export function headerRules(facts: RequestFacts): RiskFinding[] {
  if (facts.platform !== 'web') return [];
  const out: RiskFinding[] = [];
  const ua = facts.userAgent;
  if (!ua) return [{ points: 30, reason: 'headers.no_user_agent' }];
  if (AUTOMATION_UA.test(ua)) out.push({ points: 40, reason: 'headers.automation_user_agent' });
  // `*` is what HTTP libraries send by default; no browser does.
  if (!facts.acceptLanguage || facts.acceptLanguage.trim() === '*')
    out.push({ points: 10, reason: 'headers.no_accept_language' });

  // Chromium browsers send Sec-CH-UA on secure origins; Firefox and Safari never do.
  const claimsChromium = /Chrome\/|Chromium\/|Edg\//.test(ua);
  const claimsOther = /Firefox\/|Version\/[\d.]+ .*Safari\//.test(ua) && !claimsChromium;
  if (facts.secChUa && claimsOther) out.push({ points: 25, reason: 'headers.client_hints_contradict_ua' });
  if (facts.secChUa && claimsChromium) {
    const uaMajor = /(?:Chrome|Chromium)\/(\d+)/.exec(ua)?.[1];
    const hintMajors = [...facts.secChUa.matchAll(/;v="(\d+)"/g)].map((m) => m[1]);
    if (uaMajor && hintMajors.length > 0 && !hintMajors.includes(uaMajor)) {
      out.push({ points: 20, reason: 'headers.client_hints_version_mismatch' });
    }
  }
  const uaMobile = /Mobile|Android|iPhone|iPad/.test(ua);
  if (facts.secChUaMobile === '?1' && !uaMobile)
    out.push({ points: 10, reason: 'headers.mobile_hint_mismatch' });
  if (facts.secChUaPlatform) {
    const platform = facts.secChUaPlatform.replaceAll('"', '').toLowerCase();
    const uaPlatform = /windows/i.test(ua)
      ? 'windows'
      : /android/i.test(ua)
        ? 'android'
        : /mac os x|macintosh/i.test(ua)
          ? 'macos'
          : /linux|x11/i.test(ua)
            ? 'linux'
            : /iphone|ipad/i.test(ua)
              ? 'ios'
              : null;
    const normalized = platform === 'chrome os' || platform === 'chromeos' ? 'linux' : platform;
    if (uaPlatform && normalized && normalized !== 'unknown' && normalized !== uaPlatform) {
      out.push({ points: 15, reason: 'headers.platform_hint_mismatch' });
    }
  }
  return out;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preferredLanguage } from './pages.ts';
import { type DemoServer, startDemoServer } from './server.ts';

/** The demo's widget speaks the visitor's language, not the page's hard-coded English. */
describe('demo page language', () => {
  let demo: DemoServer;
  beforeAll(async () => {
    demo = await startDemoServer({
      host: '127.0.0.1',
      port: 0,
      apiUrl: 'http://127.0.0.1:9',
      appKey: 'ak_demo',
      appSecret: 'as_demo',
    });
  });
  afterAll(() => demo?.close());

  const widgetLang = async (acceptLanguage?: string) => {
    const res = await fetch(`${demo.url}/login`, {
      headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {},
    });
    expect(res.status).toBe(200);
    return /data-gatehouse-lang="([^"]*)"/.exec(await res.text())?.[1];
  };

  it("gives the widget the browser's preferred language from Accept-Language over HTTP", async () => {
    expect(await widgetLang('ar-EG,ar;q=0.9,en;q=0.5')).toBe('ar-EG');
    expect(await widgetLang('en;q=0.4, de-AT;q=0.8, fr;q=0.6')).toBe('de-AT');
    // No header: the widget follows the page (English) and then the browser's navigator.languages.
    expect(await widgetLang()).toBeUndefined();
  });

  it('reads q-values and ignores what is not a language tag', () => {
    expect(preferredLanguage('*;q=1, he;q=0.9')).toBe('he');
    expect(preferredLanguage('fr;q=0, ja')).toBe('ja');
    expect(preferredLanguage('"><script>')).toBeUndefined();
    expect(preferredLanguage(undefined)).toBeUndefined();
  });
});

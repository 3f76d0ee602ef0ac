import { databaseAvailable } from '@gatehouse/api/testing';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { AppSettingsInput } from '../../../api/src/apps/settings.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';
import { press } from './helpers.ts';
import { formPage } from './page-server.ts';
import { INVISIBLE_WIRE_BUDGET, LOADER_WIRE_BUDGET, measureFirstLoad } from './wire.ts';

/*
 * The Turnstile-style options in Debian's Chromium against a real API: the expired state and
 * refreshExpired, retry, the interactive and timeout callbacks, size, tabIndex, the script URL's
 * render=explicit and onload, the lazily loaded language pack, and the first load's bytes on the wire.
 */
const run = chromiumAvailable() && (await databaseAvailable());

const imageOnly = { invisible_below: 0, image_below: 101, image_kinds: ['slide' as const] };

type Event = { type: string; token?: string; code?: string };

describe.runIf(run)('widget options in Chromium', () => {
  const suite = widgetBrowserSuite('gatehouse-widget-');
  const { newPage } = suite;

  const app = (settings: Partial<AppSettingsInput>) =>
    suite.api.createApp({ name: 'options-test', ...settings });

  async function open(html: string, before: (page: Page) => Promise<void> = async () => {}): Promise<Page> {
    const page = await newPage();
    await before(page);
    await page.goto(suite.site.page(`/o-${Math.random().toString(36).slice(2)}.html`, html));
    return page;
  }

  /** Renders into #captcha with `options`, every callback recorded in window.events. */
  async function render(page: Page, options: Record<string, unknown>): Promise<void> {
    await page.waitForFunction(() => 'Gatehouse' in window);
    await page.evaluate(
      ({ options, apiServer }) => {
        // biome-ignore lint/suspicious/noExplicitAny: the page's globals, set and read by this test only.
        const w = window as unknown as Record<string, any>;
        w.events = [];
        const push = (type: string) => (arg?: unknown) =>
          w.events.push({
            type,
            ...(typeof arg === 'string' ? { token: arg } : {}),
            ...(arg && typeof arg === 'object' && 'code' in arg
              ? { code: (arg as { code: string }).code }
              : {}),
          });
        w.handle = w.Gatehouse.render('#captcha', {
          apiServer,
          action: 'login',
          ...options,
          onSuccess: push('success'),
          onError: push('error'),
          onExpired: push('expired'),
          onTimeout: push('timeout'),
          onBeforeInteractive: push('before-interactive'),
          onAfterInteractive: push('after-interactive'),
          onClose: push('close'),
          onReady: push('ready'),
        });
      },
      { options, apiServer: suite.api.url },
    );
  }

  const events = (page: Page) => page.evaluate(() => (window as unknown as { events: Event[] }).events);
  const count = (page: Page, type: string) =>
    page.evaluate(
      (t) => (window as unknown as { events: Event[] }).events.filter((e) => e.type === t).length,
      type,
    );
  const state = (page: Page) => page.locator('.box').getAttribute('data-state');
  const isExpired = (page: Page) =>
    page.evaluate(() => (window as unknown as { handle: { isExpired(): boolean } }).handle.isExpired());
  const field = (page: Page) => page.locator('input[name="gatehouse-token"]').inputValue();

  it('refreshExpired manual: an expired token calls onExpired, empties the field, shows expired, and waits for a click', async () => {
    const a = await app({ test_mode: true, pass_token_ttl: 30 });
    const page = await open(formPage('<div id="captcha"></div>'), (p) => p.clock.install());
    await render(page, { appKey: a.appKey, mode: 'embedded', refreshExpired: 'manual' });
    await expect.poll(() => count(page, 'success'), { timeout: 60_000 }).toBe(1);
    const first = (await events(page)).find((e) => e.type === 'success')?.token;
    expect(await isExpired(page)).toBe(false);

    await page.clock.fastForward('00:26');
    await expect.poll(() => count(page, 'expired')).toBe(1);
    expect((await events(page)).find((e) => e.type === 'expired')?.token).toBe(first);
    expect(await state(page)).toBe('expired');
    expect(await field(page)).toBe('');
    expect(await isExpired(page)).toBe(true);
    await page.clock.fastForward('00:10');
    expect(await count(page, 'success')).toBe(1); // no silent re-verification

    await page.locator('.check').click();
    await expect.poll(() => count(page, 'success'), { timeout: 60_000 }).toBe(2);
    expect(await isExpired(page)).toBe(false);
    expect(await field(page)).toMatch(/^pt_/);
  }, 120_000);

  it('refreshExpired never: the expired box cannot be clicked until reset(); auto (the default) verifies again after onExpired', async () => {
    const a = await app({ test_mode: true, pass_token_ttl: 30 });
    const page = await open(formPage('<div id="captcha"></div>'), (p) => p.clock.install());
    await render(page, { appKey: a.appKey, mode: 'embedded', refreshExpired: 'never' });
    await expect.poll(() => count(page, 'success'), { timeout: 60_000 }).toBe(1);
    await page.clock.fastForward('00:26');
    await expect.poll(() => state(page)).toBe('expired');
    expect(await page.locator('.check').getAttribute('aria-disabled')).toBe('true');
    await page.locator('.check').click({ force: true }); // a user's click on the disabled box
    await page.clock.fastForward('00:05');
    expect(await count(page, 'success')).toBe(1);
    await page.evaluate(() => (window as unknown as { handle: { reset(): void } }).handle.reset());
    expect(await isExpired(page)).toBe(false);
    await page.locator('.check').click();
    await expect.poll(() => count(page, 'success'), { timeout: 60_000 }).toBe(2);
    await suite.closeContext();

    const auto = await open(formPage('<div id="captcha"></div>'), (p) => p.clock.install());
    await render(auto, { appKey: a.appKey, mode: 'embedded' });
    await expect.poll(() => count(auto, 'success'), { timeout: 60_000 }).toBe(1);
    await auto.clock.fastForward('00:26');
    await expect.poll(() => count(auto, 'success'), { timeout: 60_000 }).toBe(2);
    expect((await events(auto)).map((e) => e.type)).toEqual(['ready', 'success', 'expired', 'success']);
  }, 180_000);

  it('retry auto: a refused init (429) is retried after retryInterval; retry never leaves the error', async () => {
    const a = await app({ test_mode: true });
    const refuseFirstInit = async (page: Page) => {
      let refused = false;
      await page.route('**/v1/challenge/init', (route) => {
        if (refused) return route.continue();
        refused = true;
        return route.fulfill({
          status: 429,
          contentType: 'application/json',
          headers: { 'Access-Control-Allow-Origin': '*' },
          body: JSON.stringify({ code: -1, error: 'rate_limited', message: 'Too many requests.' }),
        });
      });
    };
    const page = await open(formPage('<div id="captcha"></div>'), refuseFirstInit);
    await render(page, { appKey: a.appKey, mode: 'invisible', retryInterval: 300 });
    await expect.poll(() => count(page, 'success'), { timeout: 60_000 }).toBe(1);
    expect((await events(page)).map((e) => `${e.type}${e.code ? `:${e.code}` : ''}`)).toEqual([
      'ready',
      'error:rate_limited',
      'success',
    ]);
    await suite.closeContext();

    const never = await open(formPage('<div id="captcha"></div>'), refuseFirstInit);
    await render(never, { appKey: a.appKey, mode: 'embedded', retry: 'never', retryInterval: 300 });
    await expect.poll(() => count(never, 'error')).toBe(1);
    await never.waitForTimeout(1500);
    expect(await count(never, 'success')).toBe(0);
    expect(await state(never)).toBe('error');
  }, 120_000);

  it('interactive callbacks: before the image challenge shows, after it is gone; an unanswered challenge times out and is replaced', async () => {
    const a = await app({ risk_policy: imageOnly });
    const page = await open(formPage('<div id="captcha"></div>'), (p) => p.clock.install());
    const inits: number[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/challenge/init')) inits.push(Date.now());
    });
    const init = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/init'));
    await render(page, { appKey: a.appKey, mode: 'popup' });
    await page.locator('.check').click();
    const expiresIn = (await (await init).json()).data.expires_in as number;
    await page.locator('.handle').waitFor({ state: 'visible' });
    expect((await events(page)).map((e) => e.type)).toEqual(['ready', 'before-interactive']);

    // The old challenge stays shown while its replacement loads: wait for the new one before pressing Escape.
    const replaced = page.waitForResponse(
      (r) => r.url().endsWith('/v1/challenge/init') && inits.length === 2,
    );
    await page.clock.fastForward((expiresIn + 1) * 1000);
    await expect.poll(() => count(page, 'timeout')).toBe(1);
    await replaced; // a new challenge replaced it
    expect(inits.length).toBe(2);
    await page.locator('.handle').waitFor({ state: 'visible' });

    await press(page, 'Escape');
    await expect.poll(() => count(page, 'after-interactive')).toBe(1);
    expect((await events(page)).map((e) => e.type)).toEqual([
      'ready',
      'before-interactive',
      'timeout',
      'after-interactive',
      'close',
    ]);
  }, 120_000);

  it('size and tabIndex: compact and flexible boxes, and the tabindex of the button', async () => {
    const a = await app({ test_mode: true });
    const widths: Record<string, number> = {};
    for (const size of ['normal', 'compact', 'flexible']) {
      const page = await open(formPage('<div id="captcha" style="width:600px"></div>'));
      await render(page, { appKey: a.appKey, mode: 'popup', size, tabIndex: 3 });
      const box = await page.locator('.box').boundingBox();
      widths[size] = box?.width ?? 0;
      expect(await page.locator('.check').getAttribute('tabindex')).toBe('3');
      await suite.closeContext();
    }
    expect(widths.normal).toBeLessThanOrEqual(320);
    expect(widths.compact).toBeLessThanOrEqual(160);
    expect(widths.flexible).toBe(600);
  }, 90_000);

  it('the script URL: render=explicit leaves data-gatehouse elements alone; onload is called with Gatehouse', async () => {
    const a = await app({ test_mode: true });
    const html = `<!doctype html><html lang="en"><head><title>explicit</title>
<script>window.onGatehouse = (g) => { window.loaded = typeof g.render; };</script>
<script src="/widget/gatehouse.js?render=explicit&onload=onGatehouse" async defer></script></head>
<body><form><div id="auto" data-gatehouse-app-key="${a.appKey}" data-gatehouse-action="login"></div></form></body></html>`;
    const page = await open(html);
    await page.waitForFunction(() => (window as unknown as { loaded?: string }).loaded);
    expect(await page.evaluate(() => (window as unknown as { loaded: string }).loaded)).toBe('function');
    expect(await page.locator('input[name="gatehouse-token"]').count()).toBe(0);
    await suite.closeContext();

    // Without the parameter the same element is rendered.
    const implicit = await open(html.replace('?render=explicit&onload=onGatehouse', ''));
    await implicit.locator('input[name="gatehouse-token"]').waitFor({ state: 'attached' });
  }, 60_000);

  it('other languages come with the language pack, fetched only by pages that need it', async () => {
    const a = await app({ test_mode: true });
    const fetched: string[] = [];
    const page = await open(formPage('<div id="captcha"></div>'), async (p) => {
      p.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    });
    await render(page, { appKey: a.appKey, mode: 'popup', lang: 'fr' });
    await expect.poll(() => page.locator('.check').textContent()).toContain('Je suis humain');
    expect(fetched.some((p) => /gatehouse-i18n\.[\w-]+\.js$/.test(p))).toBe(true);
    await suite.closeContext();

    const english: string[] = [];
    const en = await open(formPage('<div id="captcha"></div>'), async (p) => {
      p.on('request', (r) => english.push(new URL(r.url()).pathname));
    });
    await render(en, { appKey: a.appKey, mode: 'popup', lang: 'en' });
    expect(await en.locator('.check').textContent()).toContain("I'm human");
    expect(english.some((p) => p.includes('gatehouse-i18n'))).toBe(false);
  }, 60_000);

  it(`first load on the wire: loader ≤ ${LOADER_WIRE_BUDGET / 1024} KB, invisible tier ≤ ${INVISIBLE_WIRE_BUDGET / 1024} KB, no proof-of-work code without a puzzle`, async () => {
    const invisible = await app({ test_mode: true });
    const degraded = await app({ monthly_quota: 0 });
    const load = await measureFirstLoad(suite.browser, suite.api.url, invisible.appKey);
    expect(load.token).toMatch(/^pt_/);
    const loader = load.files.find((f) => f.path === '/widget/gatehouse.js');
    expect(loader?.encoding).toBe('br');
    expect(loader?.bytes).toBeLessThanOrEqual(LOADER_WIRE_BUDGET);
    expect(load.files.some((f) => f.path.includes('gatehouse-pow'))).toBe(true);
    expect(load.widgetBytes).toBeLessThanOrEqual(INVISIBLE_WIRE_BUDGET);

    const none = await measureFirstLoad(suite.browser, suite.api.url, degraded.appKey);
    expect(none.token).toMatch(/^dg_/);
    expect(none.files.filter((f) => f.path.startsWith('/widget/')).map((f) => f.path)).toEqual([
      '/widget/gatehouse.js',
    ]);
    console.log(
      `wire: loader ${loader?.bytes} B, invisible tier ${load.widgetBytes} B (widget files), ${load.totalBytes} B with the API's answers`,
    );
  }, 120_000);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USER } from '../../../api/src/demo/login.ts';
import { fallbackEmbed } from '../../../api/src/demo/pages.ts';
import { startDemoServer } from '../../../api/src/demo/server.ts';
import { loadStandbyConfig } from '../../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../../standby/src/standby.ts';
import type { WidgetHandle } from '../src/options.ts';
import { chromiumAvailable, copyServedWidget, launchChromium } from './browser.ts';
import { events, outcome, render, type WidgetEvent, waitFor } from './helpers.ts';
import { formPage, type PageServer, startPageServer } from './page-server.ts';

/*
 * Continuity in Chromium with real processes: the main API and a standby sharing the store of used
 * offline tokens. The page runs the gatehouse.js the API serves (with the deployment's standby list in
 * it: a dead host first, then the real standby, so the widget must try both), from the integrator's
 * origin so the page still has its widget while the main API is away.
 */
const run = chromiumAvailable() && (await databaseAvailable());

const FAST_PROBES = {
  STANDBY_PROBE_INTERVAL_MS: '50',
  STANDBY_PROBE_TIMEOUT_MS: '200',
  STANDBY_FAIL_AFTER: '3',
  STANDBY_RECOVER_AFTER: '2',
};

/** A port nothing listens on (it refuses connections). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.runIf(run)('web widget failover in Chromium', () => {
  const store = new MemoryConsumptionStore();
  let api: TestApi;
  let standby: RunningStandby;
  let standbyClosed = false;
  let site: PageServer;
  let browser: Browser;
  let widgetDir: string;
  let context: BrowserContext | undefined;
  let deadUrl: string;
  let bypassUrl: string;
  let app: { appKey: string; appSecret: string };
  const pageErrors: string[] = [];

  beforeAll(async () => {
    deadUrl = `http://127.0.0.1:${await freePort()}`;
    const bypassPort = await freePort();
    bypassUrl = `http://127.0.0.1:${bypassPort}`;
    api = await startTestApi({ STANDBY_BYPASS_URLS: `${deadUrl},${bypassUrl}` }, undefined, {
      offlineStore: store,
    });
    app = await api.createApp({ name: 'failover', test_mode: true });
    standby = await startStandby(
      loadStandbyConfig({
        ...FAST_PROBES,
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: String(bypassPort),
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
      }),
      { store, logger: pino({ level: 'silent' }) },
    );
    expect(standby.urls.bypass).toBe(bypassUrl);

    // The widget as the API serves it (built by the API on first use), copied to the integrator's site.
    const served = await copyServedWidget(api.url);
    widgetDir = served.dir;
    expect(
      served.loader.startsWith(`window.__gatehouseConfig1={"bypass":["${deadUrl}","${bypassUrl}"]};`),
    ).toBe(true);
    site = await startPageServer({ widgetDir, apiUrl: api.url, secrets: new Map() });
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    if (!standbyClosed) await standby?.close();
    await api?.close();
    if (widgetDir) rmSync(widgetDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
    expect(pageErrors.splice(0)).toEqual([]);
  });

  /** A page with the widget, recording which hosts its challenge inits went to and what it logged. */
  async function widgetPage(appKey: string) {
    context = await browser.newContext({ viewport: { width: 900, height: 700 }, locale: 'en-GB' });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const inits: string[] = [];
    const logged: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/challenge/init')) inits.push(new URL(r.url()).origin);
    });
    page.on('console', (m) => {
      if (m.type() === 'warning' || m.type() === 'error') logged.push(m.text());
    });
    await page.goto(
      site.page(`/p-${Math.random().toString(36).slice(2)}.html`, formPage('<div id="captcha"></div>')),
    );
    await render(page, { appKey, mode: 'invisible', apiServer: api.url });
    return { page, inits, logged };
  }

  /** Starts a new verification in the page (as after the backend consumed the last token). */
  async function again(page: Page): Promise<WidgetEvent> {
    await page.evaluate(() => {
      // biome-ignore lint/suspicious/noExplicitAny: the page's globals, set by helpers.render.
      const w = window as any;
      w.events = [];
      w.handle.reset();
      w.handle.execute().catch(() => {});
    });
    return outcome(page);
  }

  const auth = () => ({ 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret });
  const tokenOf = (e: WidgetEvent) => {
    expect(e.type, JSON.stringify(e)).toBe('success');
    return (e as { token: string }).token;
  };

  it('a 4xx from the main API (unknown app key) is reported and does not fail over', async () => {
    const { page, inits } = await widgetPage('ak_nobody');
    expect(await outcome(page)).toMatchObject({ type: 'error', code: 'invalid_app_key' });
    expect(inits).toEqual([api.url]);
    expect((await events(page)).filter((e) => e.type === 'success')).toEqual([]);
  });

  it('main API and standby hosts unreachable: co_ shown as unverified (not Verified), onUnverified fired, field marked', async () => {
    for (const [locale, expected] of [
      ['en-GB', "Couldn't verify right now — you can still try to continue"],
      ['fr-FR', 'Vérification impossible pour le moment — vous pouvez quand même essayer de continuer'],
    ] as const) {
      context = await browser.newContext({ locale });
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      await page.goto(site.page(`/co-${locale}.html`, formPage('<div id="captcha"></div>')));
      await render(page, {
        appKey: 'ak_any',
        mode: 'embedded',
        lang: locale.slice(0, 2),
        apiServer: deadUrl,
        bypassServers: `http://127.0.0.1:${await freePort()}`,
      });
      const e = await outcome(page);
      expect(e.type, JSON.stringify(e)).toBe('unverified');
      expect((e as { token: string }).token).toMatch(/^co_/);
      expect((await events(page)).filter((x) => x.type === 'success')).toEqual([]);
      const shown = async () =>
        page.evaluate(() => {
          const root = document.querySelector('#captcha > div')?.shadowRoot;
          const field = document.querySelector<HTMLInputElement>('input[name="gatehouse-token"]');
          return {
            state: root?.querySelector<HTMLElement>('.box')?.dataset.state,
            checked: root?.querySelector('.check')?.getAttribute('aria-checked'),
            status: root?.querySelector('.status')?.textContent,
            live: root?.querySelector('[role=status]')?.textContent,
            field: field?.value.slice(0, 3),
            fieldState: field?.dataset.gatehouseState,
          };
        });
      await expect.poll(async () => (await shown()).status, { timeout: 10_000 }).toBe(expected);
      expect(await shown()).toEqual({
        state: 'unverified',
        checked: 'false',
        status: expected,
        live: expected,
        field: 'co_',
        fieldState: 'unverified',
      });
      await context.close();
      context = undefined;
    }
  }, 60_000);

  it("the standby serves the main API's widget files, byte for byte, and keeps them on disk", async () => {
    await standby.widget.refresh();
    const loader = await (await fetch(`${api.url}/widget/gatehouse.js`)).text();
    const names = ['gatehouse.js', ...new Set(loader.match(/gatehouse-(ui|pow|i18n)\.[\w-]+\.js/g) ?? [])];
    expect(names.length).toBe(4);
    for (const name of names) {
      const main = await fetch(`${api.url}/widget/${name}`);
      const copy = await fetch(`${bypassUrl}/widget/${name}`);
      expect(copy.status, name).toBe(200);
      expect(copy.headers.get('access-control-allow-origin')).toBe('*');
      expect(Buffer.from(await copy.arrayBuffer()).equals(Buffer.from(await main.arrayBuffer())), name).toBe(
        true,
      );
    }
    expect((await fetch(`${bypassUrl}/widget/gatehouse-ui.nope.js`)).status).toBe(404);
    // The loader knows each chunk's SRI hash: the copies pass it (same bytes).
    expect(loader).toMatch(/sha384-[A-Za-z0-9+/]{64}/);
  });

  it('a page whose loader came from the main API gets the worker and language pack from the standby when the main API is down (offline_, never co_)', async () => {
    await standby.widget.refresh();
    await standby.snapshots.refresh();
    context = await browser.newContext({ locale: 'fr-FR' });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const widgetFiles: string[] = [];
    page.on('requestfinished', (r) => {
      if (r.url().includes('/widget/gatehouse-')) widgetFiles.push(r.url());
    });
    // The loader straight from the main API, as the README shows; nothing else of the widget loaded yet.
    await page.goto(
      site.page(
        '/main-loader.html',
        `<!doctype html><html lang="fr"><head><script src="${api.url}/widget/gatehouse.js" async defer></script></head><body><form><div id="captcha"></div></form></body></html>`,
      ),
    );
    await page.waitForFunction(() => 'Gatehouse' in window);
    await api.pause();
    try {
      await waitFor('the standby to serve', () => standby.health.serving);
      await render(page, { appKey: app.appKey, mode: 'embedded', lang: 'fr' });
      const e = await outcome(page);
      expect(e.type, JSON.stringify(e)).toBe('success');
      expect((e as { token: string }).token).toMatch(/^offline_/);
      const fromStandby = widgetFiles.filter((u) => u.startsWith(`${bypassUrl}/widget/`));
      expect(
        fromStandby.some((u) => /gatehouse-pow\./.test(u)),
        widgetFiles.join(' '),
      ).toBe(true);
      expect(
        fromStandby.some((u) => /gatehouse-i18n\./.test(u)),
        widgetFiles.join(' '),
      ).toBe(true);
      await expect
        .poll(() =>
          page.evaluate(
            () => document.querySelector('#captcha > div')?.shadowRoot?.querySelector('.status')?.textContent,
          ),
        )
        .toBe('Vérifié');
    } finally {
      await api.resume();
      await waitFor('the standby to stand down', () => !standby.health.serving, 15_000);
    }
  }, 60_000);

  it('a page first opened during the outage, nothing cached: the fallback embed loads the widget from a standby host (offline_)', async () => {
    await standby.widget.refresh();
    await standby.snapshots.refresh();
    await api.pause();
    try {
      await waitFor('the standby to serve', () => standby.health.serving);
      context = await browser.newContext();
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      const loaders: string[] = [];
      page.on('requestfinished', (r) => {
        if (r.url().endsWith('/widget/gatehouse.js')) loaders.push(new URL(r.url()).origin);
      });
      await page.goto(
        site.page(
          '/outage-embed.html',
          `<!doctype html><html><head>${fallbackEmbed([api.url, deadUrl, bypassUrl])}
<script>window.events=[];function ok(t){events.push({type:'success',token:t})}function unverified(t){events.push({type:'unverified',token:t})}</script></head>
<body><form><div id="captcha" data-gatehouse-app-key="${app.appKey}" data-gatehouse-action="login" data-gatehouse-mode="invisible" data-gatehouse-api-server="${api.url}" data-gatehouse-callback="ok" data-gatehouse-unverified-callback="unverified"></div></form></body></html>`,
        ),
      );
      const e = await outcome(page);
      expect(e.type, JSON.stringify(e)).toBe('success');
      expect((e as { token: string }).token).toMatch(/^offline_/);
      expect(loaders).toEqual([bypassUrl]);
    } finally {
      await api.resume();
      await waitFor('the standby to stand down', () => !standby.health.serving, 15_000);
    }
  }, 60_000);

  it('a pt_ issued before the outage and sent during it: the demo backend says reverify, the widget verifies again through the standby, the visitor signs in', async () => {
    await standby.widget.refresh();
    await standby.snapshots.refresh();
    const demo = await startDemoServer({
      host: '127.0.0.1',
      port: 0,
      apiUrl: api.url,
      appKey: app.appKey,
      appSecret: app.appSecret,
      standbyUrls: [bypassUrl],
      backupUrls: [standby.urls.fallback as string],
    });
    try {
      context = await browser.newContext();
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      await page.goto(`${demo.url}/login`);
      const field = page.locator('input[name="gatehouse-token"]');
      await expect.poll(() => field.inputValue(), { timeout: 30_000 }).toMatch(/^pt_/);
      await page.fill('input[name="username"]', DEMO_USER.username);
      await page.fill('input[name="password"]', DEMO_USER.password);
      await api.pause();
      await waitFor('the standby to serve', () => standby.health.serving);
      await page.click('button[type="submit"]');
      await page.waitForSelector('main[data-outcome]', { timeout: 45_000 });
      const shown = await page.evaluate(() => ({
        outcome: document.querySelector('main')?.dataset.outcome,
        text: document.body.textContent ?? '',
      }));
      expect(shown.outcome, shown.text).toBe('signed-in');
      expect(shown.text).toMatch(/offline\s*true/i);
    } finally {
      await api.resume();
      await demo.close();
      await waitFor('the standby to stand down', () => !standby.health.serving, 15_000);
    }
  }, 90_000);

  it('main API → standby (offline_) → client-only (co_) → main API again (pt_)', async () => {
    const { page, inits, logged } = await widgetPage(app.appKey);

    // 1. Main API up: a pass token.
    const pt = tokenOf(await outcome(page));
    expect(pt).toMatch(/^pt_/);
    expect(inits).toEqual([api.url]);
    expect((await api.post('/v1/validate', { pass_token: pt }, auth())).body.data.valid).toBe(true);

    // 2. Main API gone (the port refuses connections), the standby serving: an offline_ token from the
    //    second bypass host (the first is dead), which the fallback API accepts once.
    await standby.snapshots.refresh();
    await api.pause();
    await waitFor('the standby to serve', () => standby.health.serving);
    inits.length = 0;
    const offline = tokenOf(await again(page));
    expect(offline).toMatch(/^offline_/);
    expect(inits).toEqual([api.url, deadUrl, bypassUrl]);
    const verdict = await fetch(`${standby.urls.fallback}/api/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: JSON.stringify({ pass_token: offline }),
    });
    expect((await verdict.json()).data).toMatchObject({ valid: true, offline: true, action: 'login' });

    // 3. The standby gone too: the widget completes with a client-only token, never as a success
    //    (onUnverified, not onSuccess; state `unverified`), and says so on the console.
    await standby.close();
    standbyClosed = true;
    inits.length = 0;
    const unverified = await again(page);
    expect(unverified.type, JSON.stringify(unverified)).toBe('unverified');
    const co = (unverified as { token: string }).token;
    expect(co).toMatch(/^co_[A-Za-z0-9_-]{20,}$/);
    expect((await events(page)).filter((e) => e.type === 'success')).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { handle: WidgetHandle }).handle.getState())).toBe(
      'unverified',
    );
    expect(inits).toEqual([api.url, bypassUrl, deadUrl]);
    expect(logged.some((line) => line.includes('co_'))).toBe(true);

    // 4. The main API back: the next verification uses it at once, and co_ is never valid there.
    await api.resume();
    inits.length = 0;
    const back = tokenOf(await again(page));
    expect(back).toMatch(/^pt_/);
    expect(inits).toEqual([api.url]);
    expect((await api.post('/v1/validate', { pass_token: back }, auth())).body.data.valid).toBe(true);
    const coVerdict = await api.post('/v1/validate', { pass_token: co }, auth());
    // A verdict, not an error: HTTP 200, valid false, the code in data.error.
    expect(coVerdict.status).toBe(200);
    expect(coVerdict.body.data).toMatchObject({ valid: false, error: 'token_not_found' });
  }, 120_000);
});

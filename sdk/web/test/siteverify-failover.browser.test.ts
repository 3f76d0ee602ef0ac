import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseAvailable, type Json, REDIS_URL, redisAvailable } from '@gatehouse/api/testing';
import { Child, freePort, waitUntilReady } from '@gatehouse/api/testing/processes';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { solveOnHost } from '../../node/src/headless-protocol.ts';
import { chromiumAvailable, launchChromium } from './browser.ts';
import { type BackendVerdict, startVendorSite, type VendorSite } from './vendor-site.ts';

/*
 * One siteverify URL through an outage, as a site migrated from Turnstile lives it: Cloudflare's explicit
 * render page (only the script URL and the key changed) and a backend that verifies with Cloudflare's
 * documented FormData call, configured with ONE verify URL, the standby fallback host's. The main API and
 * the standby are real processes sharing Redis (STANDBY_STORE_URL); the main API is killed with SIGKILL
 * mid-session and restarted on the same data. Each token is accepted exactly once across both hosts.
 */
const run =
  chromiumAvailable() &&
  (await databaseAvailable()) &&
  (await redisAvailable("siteverify through an outage (the standby's shared store)"));

// Fast, but patient with a main API busy building its widget on a loaded machine.
const FAST_PROBES = {
  STANDBY_PROBE_INTERVAL_MS: '200',
  STANDBY_PROBE_TIMEOUT_MS: '2000',
  STANDBY_FAIL_AFTER: '3',
  STANDBY_RECOVER_AFTER: '2',
};

describe.runIf(run)(
  'Turnstile siteverify at the fallback host, main API killed',
  { timeout: 240_000 },
  () => {
    const adminToken = randomBytes(24).toString('base64url');
    const syncToken = `st_${randomBytes(24).toString('base64url')}`;
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-siteverify-failover-'));
    // A region of this run's own: its outage log and signing key are nobody else's in the shared Redis.
    const region = `sv-${randomBytes(4).toString('hex')}`;
    let apiEnv: Record<string, string>;
    let mainUrl: string;
    let bypassUrl: string;
    let fallbackUrl: string;
    let api: Child;
    let standby: Child;
    let app: { appKey: string; appSecret: string };
    let site: VendorSite;
    let hcaptchaSite: VendorSite;
    let browser: Browser;
    let context: BrowserContext | undefined;

    const startApi = async () => {
      api = new Child('main API', 'api/src/server.ts', apiEnv);
      await waitUntilReady(api, `${mainUrl}/readyz`, 120_000);
    };
    const status = async () => (await (await fetch(`${fallbackUrl}/status`)).json()) as Json;
    async function until(what: string, check: () => Promise<boolean>, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (!(await check().catch(() => false))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${standby.output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    beforeAll(async () => {
      const [apiPort, bypassPort, fallbackPort] = await Promise.all([freePort(), freePort(), freePort()]);
      mainUrl = `http://127.0.0.1:${apiPort}`;
      bypassUrl = `http://127.0.0.1:${bypassPort}`;
      fallbackUrl = `http://127.0.0.1:${fallbackPort}`;
      apiEnv = {
        HOST: '127.0.0.1',
        PORT: String(apiPort),
        DATA_DIR: dataDir,
        GATEHOUSE_ADMIN_TOKEN: adminToken,
        STANDBY_SYNC_TOKEN: syncToken,
        STANDBY_STORE_URL: REDIS_URL,
        STANDBY_BYPASS_URLS: bypassUrl,
        STANDBY_FALLBACK_URLS: fallbackUrl,
        GATEHOUSE_REGION: region,
        // The standby forwards the backend's siteverify: its address is a proxy's, the backend's counts.
        TRUSTED_PROXIES: 'loopback',
      };
      standby = new Child('standby', 'standby/src/server.ts', {
        ...FAST_PROBES,
        STANDBY_ROLE: 'both',
        STANDBY_HOST: '127.0.0.1',
        STANDBY_BYPASS_PORT: String(bypassPort),
        STANDBY_FALLBACK_PORT: String(fallbackPort),
        MAIN_API_URL: mainUrl,
        STANDBY_DATA_DIR: join(dataDir, 'standby'),
        STANDBY_STORE_URL: REDIS_URL,
        STANDBY_SYNC_TOKEN: syncToken,
        STANDBY_SNAPSHOT_INTERVAL_MS: '1000',
        GATEHOUSE_REGION: region,
      });
      await startApi();
      const created = await fetch(`${mainUrl}/admin/v1/apps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'siteverify-failover',
          test_mode: true,
          risk_policy: { rate_limit: { ip_per_minute: 1_000_000, high_risk_ip_per_minute: 1_000_000 } },
        }),
      });
      const body = (await created.json()) as Json;
      expect(created.status, JSON.stringify(body)).toBe(201);
      app = { appKey: body.data.app_key, appSecret: body.data.app_secret };
      // The API builds the widget on first use: once, here, before anyone waits on it.
      expect((await fetch(`${mainUrl}/turnstile/v0/api.js`)).status).toBe(200);
      await waitUntilReady(standby, `${fallbackUrl}/readyz`, 120_000);
      await waitUntilReady(
        standby,
        `${fallbackUrl}/status`,
        60_000,
        (s) => s.serving === false && s.snapshot.apps >= 1,
      );
      // The backend knows one verify URL: the fallback host's.
      site = await startVendorSite('turnstile', {
        url: `${fallbackUrl}/turnstile/v0/siteverify`,
        secret: app.appSecret,
      });
      // hCaptcha's documented backend, with the optional sitekey check, at the fallback host too.
      hcaptchaSite = await startVendorSite('hcaptcha', {
        url: `${fallbackUrl}/siteverify`,
        secret: app.appSecret,
        sitekey: app.appKey,
      });
      browser = await launchChromium();
    }, 240_000);

    afterAll(async () => {
      await context?.close();
      await browser?.close();
      await site?.close();
      await hcaptchaSite?.close();
      await Promise.all([api, standby].filter(Boolean).map((p) => p.stop('SIGTERM')));
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** The page posts its form with fetch (as a SPA would) and keeps the backend's verdict. */
    async function submit(page: Page): Promise<BackendVerdict> {
      const html = await page.evaluate(async () => {
        const form = document.getElementById('login') as HTMLFormElement;
        const res = await fetch('/submit', {
          method: 'POST',
          body: new URLSearchParams(new FormData(form) as unknown as Record<string, string>),
        });
        return res.text();
      });
      const json = /<pre id="verdict">([\s\S]*)<\/pre>/.exec(html)?.[1] ?? '{}';
      return JSON.parse(json.replace(/\\u003c/g, '<')) as BackendVerdict;
    }

    const tokens = (page: Page) => page.evaluate(() => (window as unknown as { tokens: string[] }).tokens);

    it('signs in before, during and after the outage with one verify URL; every token once', async () => {
      context = await browser.newContext({ viewport: { width: 900, height: 700 }, locale: 'en-GB' });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/ (explicit rendering).
      await page.goto(
        site.page(
          '/login.html',
          `<!DOCTYPE html><html><head>
<script>
  window.tokens = [];
  window.onloadTurnstileCallback = function () {
    window.widgetId = turnstile.render('#example-container', {
      sitekey: '${app.appKey}',
      action: 'login',
      cData: 'sess-12345',
      callback: function (token) { window.tokens.push(token); },
    });
  };
</script>
<script src="${mainUrl}/turnstile/v0/api.js?render=explicit&onload=onloadTurnstileCallback" defer></script>
</head><body>
<form id="login" action="/submit" method="POST"><input name="email" value="alice@example.com">
<div id="example-container"></div><button type="submit">Sign in</button></form>
</body></html>`,
        ),
      );
      // 1. Main API up: a pt_ token, verified through the fallback host (forwarded to the main API).
      await page.waitForFunction(
        () => (window as unknown as { tokens: string[] }).tokens.length === 1,
        null,
        {
          timeout: 90_000,
        },
      );
      expect((await tokens(page))[0]).toMatch(/^pt_/);
      const before = await submit(page);
      expect(before.outcome, JSON.stringify(before) + standby.output()).toMatchObject({
        success: true,
        action: 'login',
        cdata: 'sess-12345',
      });
      expect((await submit(page)).outcome['error-codes']).toEqual(['timeout-or-duplicate']);
      // A pt_ token solved now and presented during the outage: it can only be answered after it.
      const heldPass = await solveOnHost(mainUrl, {
        appKey: app.appKey,
        action: 'login',
        fetch,
        timeoutMs: 10_000,
      });

      // An hCaptcha checkbox page opened before the outage: its box waits for the person.
      const checkboxPage = await context.newPage();
      checkboxPage.on('pageerror', (e) => errors.push(String(e)));
      // docs.hcaptcha.com ("Add the hCaptcha Widget to your Webpage").
      await checkboxPage.goto(
        hcaptchaSite.page(
          '/signup.html',
          `<html><head><script src="${mainUrl}/hcaptcha/1/api.js" async defer></script></head>
<body><form action="/submit" method="POST">
  <input type="text" name="email" value="bob@example.com" />
  <div class="h-captcha" data-sitekey="${app.appKey}"></div><br />
  <input type="submit" value="Submit" />
</form></body></html>`,
        ),
      );
      await checkboxPage.locator('.h-captcha [role=checkbox]').waitFor({ state: 'visible', timeout: 60_000 });

      // 2. SIGKILL: the main API dies without a word; the standby takes over.
      await api.stop('SIGKILL');
      await until('the standby serving', async () => (await status()).serving === true);
      await page.evaluate(() =>
        (window as unknown as { turnstile: { reset(id: string): void }; widgetId: string }).turnstile.reset(
          (window as unknown as { widgetId: string }).widgetId,
        ),
      );
      await page.waitForFunction(
        () => (window as unknown as { tokens: string[] }).tokens.length === 2,
        null,
        {
          timeout: 90_000,
        },
      );
      const offline = (await tokens(page))[1]!;
      expect(offline).toMatch(/^offline_/);
      const during = await submit(page);
      expect(during.status).toBe(200);
      expect(during.outcome).toMatchObject({
        success: true,
        action: 'login',
        cdata: 'sess-12345',
        hostname: '127.0.0.1',
      });
      // Replayed at the same URL during the outage: spent.
      expect((await submit(page)).outcome['error-codes']).toEqual(['timeout-or-duplicate']);
      // The pt_ token cannot be answered for now: 503, success false, never a pass.
      const verify = (url: string, response: string) => {
        const form = new FormData();
        form.append('secret', app.appSecret);
        form.append('response', response);
        return fetch(url, { method: 'POST', body: form }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as Json,
        }));
      };
      const passDuring = await verify(`${fallbackUrl}/turnstile/v0/siteverify`, heldPass.passToken);
      expect(passDuring.status).toBe(503);
      expect(passDuring.body.success).toBe(false);
      // An offline_ token minted now and presented only after the recovery.
      const heldOffline = await solveOnHost(bypassUrl, {
        appKey: app.appKey,
        action: 'login',
        fetch,
        timeoutMs: 10_000,
      });
      expect(heldOffline.passToken).toMatch(/^offline_/);

      // The person ticks the hCaptcha box during the outage: an offline_ token, verified at the fallback host.
      await checkboxPage.locator('.h-captcha [role=checkbox]').click();
      await checkboxPage.waitForFunction(
        () =>
          (document.querySelector('textarea[name="h-captcha-response"]') as HTMLTextAreaElement).value
            .length > 0,
        null,
        { timeout: 90_000 },
      );
      expect(await checkboxPage.inputValue('textarea[name="h-captcha-response"]')).toMatch(/^offline_/);
      await checkboxPage.click('input[type="submit"]');
      const signup = JSON.parse(
        (await checkboxPage.locator('#verdict').textContent({ timeout: 60_000 })) ?? '{}',
      ) as BackendVerdict;
      expect(signup.outcome).toMatchObject({ success: true, hostname: '127.0.0.1', score: 0 });

      // 3. The main API comes back on the same data; the standby steps back.
      await startApi();
      await until('the standby online again', async () => (await status()).serving === false);
      // Several verifiers at once, at both URLs: the held offline_ token passes exactly once.
      const racers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          verify(`${i % 2 ? mainUrl : fallbackUrl}/turnstile/v0/siteverify`, heldOffline.passToken),
        ),
      );
      expect(racers.filter((r) => r.body.success === true)).toHaveLength(1);
      expect(racers.every((r) => r.status === 200)).toBe(true);
      // The held pt_ token was never spent: it passes now, once.
      expect((await verify(`${fallbackUrl}/turnstile/v0/siteverify`, heldPass.passToken)).body.success).toBe(
        true,
      );
      expect(
        (await verify(`${mainUrl}/turnstile/v0/siteverify`, heldPass.passToken)).body['error-codes'],
      ).toEqual(['timeout-or-duplicate']);
      // The outage's browser token stays spent at the main API too.
      expect((await verify(`${mainUrl}/turnstile/v0/siteverify`, offline)).body['error-codes']).toEqual([
        'timeout-or-duplicate',
      ]);
      expect(errors).toEqual([]);
    });
  },
);

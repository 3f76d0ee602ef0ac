import { databaseAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openChallenge } from '../../../api/src/challenges/sealed-challenge.ts';
import { chromiumAvailable, launchChromium } from './browser.ts';
import { dragLikeAHuman } from './helpers.ts';
import { type BackendVerdict, startVendorSite, type Vendor, type VendorSite } from './vendor-site.ts';

/*
 * Pages written from Cloudflare's, Google's and hCaptcha's public documentation (their own examples, with
 * only the script URL and the keys changed), in Chromium, against a live Gatehouse API serving the
 * compatibility build at the vendors' script paths; their backends (vendor-site.ts) verify the posted
 * response field at Gatehouse's siteverify-compatible endpoints, again with only URL and secret changed.
 * The app is a test app (test mode: the invisible tier, trivial proof of work), so no image is shown.
 */
const run = chromiumAvailable() && (await databaseAvailable());

const SITEVERIFY: Record<Vendor, string> = {
  turnstile: '/turnstile/v0/siteverify',
  recaptcha: '/recaptcha/api/siteverify',
  hcaptcha: '/siteverify',
};

// Each page waits up to 60 s for what it needs; a busy CI machine must not fail on vitest's 20 s default.
describe.runIf(run)('vendor-compatible pages in Chromium', { timeout: 90_000 }, () => {
  let api: TestApi;
  let browser: Browser;
  let app: { appKey: string; appSecret: string };
  const sites = {} as Record<Vendor, VendorSite>;
  let context: BrowserContext | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    api = await startTestApi();
    app = await api.createApp({ name: 'vendor-compat', test_mode: true });
    for (const vendor of Object.keys(SITEVERIFY) as Vendor[]) {
      sites[vendor] = await startVendorSite(vendor, {
        url: api.url + SITEVERIFY[vendor],
        secret: app.appSecret,
        ...(vendor === 'hcaptcha' ? { sitekey: app.appKey } : {}),
      });
    }
    browser = await launchChromium();
    // The API builds the widget on first use (a clean checkout has no sdk/web/dist): once, here.
    expect((await fetch(`${api.url}/turnstile/v0/api.js`)).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    for (const site of Object.values(sites)) await site.close();
    await api?.close();
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
    expect(pageErrors.splice(0)).toEqual([]);
  });

  async function open(vendor: Vendor, html: string): Promise<Page> {
    context = await browser.newContext({ viewport: { width: 900, height: 700 }, locale: 'en-GB' });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`${m.text()} @ ${m.location().url}`);
    });
    page.on('request', (r) => {
      if (r.url().endsWith('/v1/challenge/init')) inits.set(page, (inits.get(page) ?? 0) + 1);
    });
    await page.goto(sites[vendor].page(`/p-${Math.random().toString(36).slice(2)}.html`, html));
    return page;
  }

  /** The backend's verdict page, after the form was posted (by a click or by the page's own script). */
  async function verdict(page: Page): Promise<BackendVerdict> {
    const text = await page.locator('#verdict').textContent({ timeout: 60_000 });
    return JSON.parse(text ?? '{}') as BackendVerdict;
  }

  /**
   * A checkbox widget (reCAPTCHA v2, hCaptcha) waits for the person: once its box is there, nothing has
   * been asked of the API, its field is empty and the box unchecked; then the click.
   */
  const inits = new WeakMap<Page, number>();
  async function checkBox(page: Page, container: string) {
    const box = page.locator(`${container} [role=checkbox]`);
    await box.waitFor({ state: 'visible', timeout: 60_000 });
    expect(inits.get(page) ?? 0).toBe(0);
    expect(await box.getAttribute('aria-checked')).toBe('false');
    expect(await page.locator(`${container} textarea`).first().inputValue()).toBe('');
    await box.click();
  }

  const filled = (page: Page, selector: string) =>
    page.waitForFunction(
      (s) => ((document.querySelector(s) as HTMLInputElement | null)?.value ?? '').length > 0,
      selector,
      { timeout: 60_000, polling: 100 },
    );

  describe('Cloudflare Turnstile', () => {
    const script = () => `${api.url}/turnstile/v0/api.js`;

    it('implicit render of .cf-turnstile: the form posts cf-turnstile-response and the backend verifies it', async () => {
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/ (implicit rendering).
      const page = await open(
        'turnstile',
        `<!DOCTYPE html><html><head>
<script src="${script()}" async defer></script>
<script>window.solved = []; function javascriptCallback(token) { window.solved.push(token); }</script>
</head><body>
<form action="/submit" method="POST">
  <input type="text" name="email" value="alice@example.com" />
  <div class="cf-turnstile" data-sitekey="${app.appKey}" data-callback="javascriptCallback" data-action="login"></div>
  <button type="submit" value="Submit">Submit</button>
</form></body></html>`,
      );
      await filled(page, 'input[name="cf-turnstile-response"]');
      const token = await page.inputValue('input[name="cf-turnstile-response"]');
      expect(await page.evaluate(() => (window as unknown as { solved: string[] }).solved)).toEqual([token]);
      // The widget's own field is not posted beside the vendor's.
      expect(await page.locator('form input[type="hidden"]').count()).toBe(1);
      await page.click('button[type="submit"]');
      const result = await verdict(page);
      expect(result.posted).toEqual(['email', 'cf-turnstile-response']);
      expect(result.status).toBe(200);
      expect(result.outcome).toMatchObject({ success: true, action: 'login', hostname: '127.0.0.1' });
    });

    it('explicit render with ?render=explicit&onload=: render returns an id, getResponse/reset/remove act on it', async () => {
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/ (explicit rendering).
      const page = await open(
        'turnstile',
        `<!DOCTYPE html><html><head>
<script>
  window.tokens = [];
  window.onloadTurnstileCallback = function () {
    window.widgetId = turnstile.render('#example-container', {
      sitekey: '${app.appKey}',
      callback: function (token) { window.tokens.push(token); },
    });
  };
</script>
<script src="${script()}?render=explicit&onload=onloadTurnstileCallback" defer></script>
</head><body>
<div class="cf-turnstile" id="not-rendered" data-sitekey="${app.appKey}"></div>
<form action="/submit" method="POST"><div id="example-container"></div><button type="submit">Go</button></form>
</body></html>`,
      );
      await page.waitForFunction(
        () => (window as unknown as { tokens: string[] }).tokens.length === 1,
        null,
        {
          timeout: 60_000,
        },
      );
      const state = await page.evaluate(() => {
        const w = window as unknown as {
          widgetId: string;
          tokens: string[];
          turnstile: {
            render(c: string, p: object): string;
            getResponse(id?: string): string | undefined;
            isExpired(id?: string): boolean;
          };
        };
        return {
          id: w.widgetId,
          again: w.turnstile.render('#example-container', { sitekey: 'ak_other' }),
          response: w.turnstile.getResponse(w.widgetId),
          byContainer: w.turnstile.getResponse('#example-container'),
          expired: w.turnstile.isExpired(w.widgetId),
          token: w.tokens[0],
          // render=explicit: the .cf-turnstile element is left alone.
          implicit: document.querySelectorAll('#not-rendered *').length,
        };
      });
      expect(typeof state.id).toBe('string');
      expect(state).toMatchObject({
        again: state.id,
        response: state.token,
        byContainer: state.token,
        expired: false,
        implicit: 0,
      });

      // reset: the token is forgotten and the widget verifies again (Turnstile's default refresh).
      await page.evaluate(() => {
        const w = window as unknown as { widgetId: string; turnstile: { reset(id: string): void } };
        w.turnstile.reset(w.widgetId);
      });
      await page.waitForFunction(
        () => (window as unknown as { tokens: string[] }).tokens.length === 2,
        null,
        {
          timeout: 60_000,
        },
      );
      const tokens = await page.evaluate(() => (window as unknown as { tokens: string[] }).tokens);
      expect(tokens[1]).not.toBe(tokens[0]);
      expect(await page.inputValue('input[name="cf-turnstile-response"]')).toBe(tokens[1]);

      const url = page.url();
      await page.click('button[type="submit"]');
      const result = await verdict(page);
      expect(result.outcome).toMatchObject({ success: true });

      // remove, on a fresh copy of the page: the widget and its field are gone.
      await page.goto(url);
      await page.waitForFunction(
        () => (window as unknown as { tokens: string[] }).tokens?.length >= 1,
        null,
        {
          timeout: 60_000,
        },
      );
      const left = await page.evaluate(() => {
        const w = window as unknown as {
          widgetId: string;
          turnstile: { remove(id: string): void; getResponse(id: string): string | undefined };
        };
        w.turnstile.remove(w.widgetId);
        return {
          fields: document.querySelectorAll('input[name="cf-turnstile-response"]').length,
          children: document.querySelectorAll('#example-container *').length,
          response: w.turnstile.getResponse(w.widgetId),
        };
      });
      expect(left).toEqual({ fields: 0, children: 0, response: undefined });
    });

    it('data-cdata reaches siteverify as cdata; a second siteverify of the same token is refused', async () => {
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/widget-configurations/ (cData)
      // and .../server-side-validation/ (single use: timeout-or-duplicate).
      const page = await open(
        'turnstile',
        `<!DOCTYPE html><html><head><script src="${script()}" async defer></script></head><body>
<form action="/submit" method="POST">
  <div class="cf-turnstile" data-sitekey="${app.appKey}" data-action="signup" data-cdata="sessionid-123456789"></div>
  <button type="submit">Sign up</button>
</form></body></html>`,
      );
      await filled(page, 'input[name="cf-turnstile-response"]');
      const token = await page.inputValue('input[name="cf-turnstile-response"]');
      await page.click('button[type="submit"]');
      expect((await verdict(page)).outcome).toMatchObject({
        success: true,
        action: 'signup',
        cdata: 'sessionid-123456789',
      });
      // The same token posted again (a replayed form): the backend's second siteverify fails.
      const replay = await page.evaluate(async (t) => {
        const answer = await fetch('/submit', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ 'cf-turnstile-response': t }),
        });
        const html = new DOMParser().parseFromString(await answer.text(), 'text/html');
        return JSON.parse(html.querySelector('#verdict')?.textContent ?? '{}');
      }, token);
      expect(replay.outcome).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] });
    });

    it('expiry: expired-callback gets the old token, isExpired is true, then refresh-expired auto brings a new one', async () => {
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/widget-configurations/
      // (expired-callback, refresh-expired) and .../client-side-rendering/ (turnstile.isExpired).
      context = await browser.newContext();
      await context.clock.install();
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      await page.goto(
        sites.turnstile.page(
          '/expiry.html',
          `<!DOCTYPE html><html><head><script src="${script()}" async defer></script>
<script>
  window.events = [];
  function onToken(t) { window.events.push(['token', t]); }
  function onExpired(t) { window.events.push(['expired', t, turnstile.isExpired(), turnstile.getResponse()]); }
</script></head><body><form action="/submit" method="POST">
  <div class="cf-turnstile" data-sitekey="${app.appKey}" data-callback="onToken" data-expired-callback="onExpired"></div>
</form></body></html>`,
        ),
      );
      const events = () => page.evaluate(() => (window as unknown as { events: unknown[][] }).events);
      await page.waitForFunction(
        () => (window as unknown as { events: unknown[] }).events.length === 1,
        null,
        {
          timeout: 60_000,
        },
      );
      const [[, first]] = (await events()) as [[string, string]];
      // The app's tokens live 300 s: past that, the widget says so and verifies again by itself.
      await page.clock.fastForward(300_000);
      await page.waitForFunction(
        () => (window as unknown as { events: unknown[] }).events.length === 3,
        null,
        {
          timeout: 60_000,
        },
      );
      const [, expired, renewed] = (await events()) as unknown[][];
      expect(expired).toEqual(['expired', first, true, undefined]);
      expect(renewed?.[0]).toBe('token');
      expect(renewed?.[1]).not.toBe(first);
      expect(
        await page.evaluate(() =>
          (window as unknown as { turnstile: { isExpired(): boolean } }).turnstile.isExpired(),
        ),
      ).toBe(false);
    });

    it('a site key Gatehouse does not know: error-callback gets the error code, no token, nothing thrown', async () => {
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/widget-configurations/ (error-callback).
      const page = await open(
        'turnstile',
        `<!DOCTYPE html><html><head><script src="${script()}" async defer></script>
<script>window.errors = []; function onError(code) { window.errors.push(code); return true; }</script></head><body>
<form action="/submit" method="POST">
  <div class="cf-turnstile" data-sitekey="ak_not_a_real_site_key" data-error-callback="onError" data-retry="never"></div>
</form></body></html>`,
      );
      await page.waitForFunction(() => (window as unknown as { errors: string[] }).errors.length > 0, null, {
        timeout: 60_000,
      });
      const errors = await page.evaluate(() => (window as unknown as { errors: string[] }).errors);
      expect(errors).toEqual([expect.stringMatching(/^[a-z_]+$/)]);
      expect(await page.inputValue('input[name="cf-turnstile-response"]')).toBe('');
      // Chromium logs the refused init itself; anything else logged is still an error.
      const refused = pageErrors.findIndex((e) => /status of 4\d\d .*\/v1\/challenge\/init$/.test(e));
      expect(refused).toBeGreaterThanOrEqual(0);
      pageErrors.splice(refused, 1);
    });

    it("?compat=recaptcha: a reCAPTCHA page and backend, moved as Cloudflare's migration guide says, pass", async () => {
      // developers.cloudflare.com/turnstile/migration/recaptcha/: the script becomes Turnstile's with
      // ?compat=recaptcha, the grecaptcha.render() call keeps its code, the backend only changes URL.
      const site = await startVendorSite('recaptcha', {
        url: api.url + SITEVERIFY.turnstile,
        secret: app.appSecret,
      });
      try {
        context = await browser.newContext();
        const page = await context.newPage();
        page.on('pageerror', (e) => pageErrors.push(String(e)));
        await page.goto(
          site.page(
            '/moved.html',
            `<html><head><script src="${script()}?compat=recaptcha&onload=onloadCallback&render=explicit" async defer></script>
<script>var onloadCallback = function() { grecaptcha.render('html_element', { 'sitekey' : '${app.appKey}' }); };</script>
</head><body><form action="/submit" method="POST"><div id="html_element"></div><input type="submit" value="Submit"></form>
</body></html>`,
          ),
        );
        await filled(page, 'textarea[name="g-recaptcha-response"]');
        await page.click('input[type="submit"]');
        const result = await verdict(page);
        expect(result.posted).toEqual(['g-recaptcha-response']);
        expect(result.outcome).toMatchObject({ success: true });
      } finally {
        await site.close();
      }
    });

    it("execution: 'execute' waits for turnstile.execute()", async () => {
      // developers.cloudflare.com/turnstile/get-started/client-side-rendering/widget-configurations/ (execution).
      const page = await open(
        'turnstile',
        `<!DOCTYPE html><html><head><script src="${script()}?render=explicit" defer></script></head><body>
<form action="/submit" method="POST"><div id="c"></div><button type="submit">Go</button></form>
<script>
  window.tokens = [];
  window.addEventListener('DOMContentLoaded', function () {
    turnstile.ready(function () {
      turnstile.render('#c', { sitekey: '${app.appKey}', execution: 'execute',
        callback: function (t) { window.tokens.push(t); } });
    });
  });
</script></body></html>`,
      );
      await page.waitForFunction(() => document.querySelector('input[name="cf-turnstile-response"]'));
      await page.waitForTimeout(1_500);
      expect(await page.evaluate(() => (window as unknown as { tokens: string[] }).tokens)).toEqual([]);
      await page.evaluate(() =>
        (window as unknown as { turnstile: { execute(c: string): void } }).turnstile.execute('#c'),
      );
      await filled(page, 'input[name="cf-turnstile-response"]');
      await page.click('button[type="submit"]');
      expect((await verdict(page)).outcome).toMatchObject({ success: true });
    });
  });

  describe('Google reCAPTCHA', () => {
    const script = () => `${api.url}/recaptcha/api.js`;

    it('v2 checkbox, automatic render: the form posts g-recaptcha-response and the backend verifies it', async () => {
      // developers.google.com/recaptcha/docs/display ("Automatically render the reCAPTCHA widget").
      const page = await open(
        'recaptcha',
        `<html><head><title>reCAPTCHA demo: Simple page</title>
<script src="${script()}" async defer></script></head>
<body><form action="/submit" method="POST">
  <div class="g-recaptcha" data-sitekey="${app.appKey}"></div><br/>
  <input type="submit" value="Submit">
</form></body></html>`,
      );
      await checkBox(page, '.g-recaptcha');
      await filled(page, 'textarea[name="g-recaptcha-response"]');
      const token = await page.evaluate(() =>
        (window as unknown as { grecaptcha: { getResponse(): string } }).grecaptcha.getResponse(),
      );
      expect(await page.inputValue('#g-recaptcha-response')).toBe(token);
      await page.click('input[type="submit"]');
      const result = await verdict(page);
      expect(result.posted).toEqual(['g-recaptcha-response']);
      expect(result.outcome).toMatchObject({ success: true, hostname: '127.0.0.1' });
    });

    it('invisible, bound to a button: the click calls data-callback, which submits the form', async () => {
      // developers.google.com/recaptcha/docs/invisible ("Automatically bind the challenge to a button").
      const page = await open(
        'recaptcha',
        `<html><head><title>reCAPTCHA demo: Simple page</title>
<script src="${script()}" async defer></script>
<script>
  function onSubmit(token) {
    document.getElementById("demo-form").submit();
  }
</script></head>
<body><form id="demo-form" action="/submit" method="POST">
  <button class="g-recaptcha" data-sitekey="${app.appKey}" data-callback="onSubmit">Submit</button><br/>
</form></body></html>`,
      );
      await page.waitForFunction(() => document.querySelector('textarea[name="g-recaptcha-response"]'));
      // Invisible: nothing runs before the click.
      expect(await page.inputValue('textarea[name="g-recaptcha-response"]')).toBe('');
      await page.click('button.g-recaptcha');
      const result = await verdict(page);
      expect(result.posted).toEqual(['g-recaptcha-response']);
      expect(result.outcome).toMatchObject({ success: true });
    });

    it('explicit render after an onload callback: grecaptcha.render returns 0, getResponse(0) gives the token', async () => {
      // developers.google.com/recaptcha/docs/display ("Explicitly render the reCAPTCHA widget").
      const page = await open(
        'recaptcha',
        `<html><head><title>reCAPTCHA demo: Explicit render after an onload callback</title>
<script type="text/javascript">
  var verifyCallback = function(response) { window.verified = response; };
  var onloadCallback = function() {
    window.widgetId1 = grecaptcha.render('html_element', {
      'sitekey' : '${app.appKey}',
      'callback' : verifyCallback,
      'theme' : 'dark'
    });
  };
</script></head>
<body><form action="/submit" method="POST">
  <div id="html_element"></div><br>
  <input type="submit" value="Submit">
</form>
<script src="${script()}?onload=onloadCallback&render=explicit" async defer></script>
</body></html>`,
      );
      await checkBox(page, '#html_element');
      await page.waitForFunction(
        () => typeof (window as unknown as { verified?: string }).verified === 'string',
        null,
        {
          timeout: 60_000,
        },
      );
      const state = await page.evaluate(() => {
        const w = window as unknown as {
          widgetId1: number;
          verified: string;
          grecaptcha: { getResponse(id?: number): string };
        };
        return { id: w.widgetId1, same: w.grecaptcha.getResponse(w.widgetId1) === w.verified };
      });
      expect(state).toEqual({ id: 0, same: true });
      await page.click('input[type="submit"]');
      expect((await verdict(page)).outcome).toMatchObject({ success: true });
    });

    it('v3: grecaptcha.ready + grecaptcha.execute(siteKey, {action}) resolves a token the backend verifies with its action', async () => {
      // developers.google.com/recaptcha/docs/v3 ("Programmatically invoke the challenge").
      const page = await open(
        'recaptcha',
        `<html><head><script src="${script()}?render=${app.appKey}"></script></head>
<body><form id="demo-form" action="/submit" method="POST">
  <input type="hidden" name="g-recaptcha-response" id="token">
  <button id="go" type="button" onclick="onClick(event)">Submit</button>
</form>
<script>
  function onClick(e) {
    e.preventDefault();
    grecaptcha.ready(function() {
      grecaptcha.execute('${app.appKey}', {action: 'submit'}).then(function(token) {
        document.getElementById('token').value = token;
        document.getElementById('demo-form').submit();
      });
    });
  }
</script></body></html>`,
      );
      await page.click('#go');
      const result = await verdict(page);
      expect(result.outcome).toMatchObject({ success: true, action: 'submit' });
      expect(typeof result.outcome.score).toBe('number');
    });
  });

  it('an image challenge in a vendor box: the UI chunk loads from the vendor path, a human drag passes, the backend verifies', async () => {
    // The reCAPTCHA v2 checkbox page again, for an app whose risk policy always asks for a slide puzzle.
    const imageApp = await api.createApp({
      name: 'vendor-compat-image',
      risk_policy: { invisible_below: 0, image_below: 101, image_kinds: ['slide'] },
    });
    const site = await startVendorSite('recaptcha', {
      url: api.url + SITEVERIFY.recaptcha,
      secret: imageApp.appSecret,
    });
    try {
      context = await browser.newContext({ viewport: { width: 900, height: 700 }, locale: 'en-GB' });
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      const init = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/init'), { timeout: 60_000 });
      const ui = page.waitForResponse((r) => /\/recaptcha\/gatehouse-ui\.[\w-]+\.js$/.test(r.url()), {
        timeout: 60_000,
      });
      await page.goto(
        site.page(
          '/image.html',
          `<html><head><script src="${api.url}/recaptcha/api.js" async defer></script></head><body>
<form action="/submit" method="POST">
  <div class="g-recaptcha" data-sitekey="${imageApp.appKey}" data-callback="onDone"></div>
  <input type="submit" value="Submit">
</form><script>window.done = []; function onDone(t) { window.done.push(t); }</script></body></html>`,
        ),
      );
      await checkBox(page, '.g-recaptcha');
      const challenge = (await (await init).json()).data;
      expect(challenge.tier).toBe('image');
      expect((await ui).status()).toBe(200);
      const answer = openChallenge(api.runtime.keys, imageApp.appId, challenge.challenge)?.img?.answer;
      if (!answer) throw new Error('no image challenge in the init answer');
      // The checkbox's picture opens above the page, as Google's does.
      const handle = page.locator('.popup .handle');
      await handle.waitFor({ state: 'visible' });
      const stage = await page.locator('.popup .stage').boundingBox();
      await dragLikeAHuman(page, handle, (answer as { x: number }).x, (stage?.width ?? 300) / 300);
      await page.waitForFunction(() => (window as unknown as { done: string[] }).done.length === 1, null, {
        timeout: 60_000,
      });
      await page.click('input[type="submit"]');
      expect((await verdict(page)).outcome).toMatchObject({ success: true });
    } finally {
      await site.close();
    }
  }, 120_000);

  it('reCAPTCHA Enterprise: grecaptcha.enterprise.ready + execute(siteKey, {action}) from enterprise.js', async () => {
    // cloud.google.com/recaptcha/docs/instrument-web-pages ("score-based keys": enterprise.js?render=KEY,
    // grecaptcha.enterprise.ready, grecaptcha.enterprise.execute); verified at the reCAPTCHA siteverify path.
    const page = await open(
      'recaptcha',
      `<html><head><script src="${api.url}/recaptcha/enterprise.js?render=${app.appKey}"></script></head><body>
<form id="f" action="/submit" method="POST"><input type="hidden" name="g-recaptcha-response" id="t"></form>
<script>
  function go() {
    grecaptcha.enterprise.ready(async () => {
      const token = await grecaptcha.enterprise.execute('${app.appKey}', {action: 'LOGIN'});
      document.getElementById('t').value = token;
      document.getElementById('f').submit();
    });
  }
</script></body></html>`,
    );
    await page.evaluate(() => (window as unknown as { go(): void }).go());
    expect((await verdict(page)).outcome).toMatchObject({ success: true, action: 'LOGIN' });
  });

  describe('hCaptcha', () => {
    const script = () => `${api.url}/hcaptcha/1/api.js`;

    it('invisible, bound to a button: the click calls data-callback, which submits the form', async () => {
      // docs.hcaptcha.com/invisible ("Invisible ... bind to a button": class h-captcha on the button).
      const page = await open(
        'hcaptcha',
        `<html><head><script src="${script()}" async defer></script>
<script>
  function onSubmit(token) {
    document.getElementById('hcaptcha-demo-form').submit();
  }
</script></head><body>
<form id="hcaptcha-demo-form" action="/submit" method="POST">
  <input type="text" name="email" value="bob@example.com" />
  <button class="h-captcha" data-sitekey="${app.appKey}" data-callback="onSubmit">Submit</button>
</form></body></html>`,
      );
      await page.waitForFunction(() => document.querySelector('textarea[name="h-captcha-response"]'));
      expect(await page.inputValue('textarea[name="h-captcha-response"]')).toBe('');
      await page.click('button.h-captcha');
      const result = await verdict(page);
      expect(result.posted).toEqual(['email', 'h-captcha-response', 'g-recaptcha-response']);
      expect(result.outcome).toMatchObject({ success: true });
    });

    it('implicit render of .h-captcha: the form posts h-captcha-response (and g-recaptcha-response) and the backend verifies it', async () => {
      // docs.hcaptcha.com ("Add the hCaptcha Widget to your Webpage").
      const page = await open(
        'hcaptcha',
        `<html><head><title>hCaptcha Demo</title>
<script src="${script()}" async defer></script></head>
<body><form action="/submit" method="POST">
  <input type="text" name="email" placeholder="Email" />
  <input type="password" name="password" placeholder="Password" />
  <div class="h-captcha" data-sitekey="${app.appKey}"></div><br />
  <input type="submit" value="Submit" />
</form></body></html>`,
      );
      await checkBox(page, '.h-captcha');
      await filled(page, 'textarea[name="h-captcha-response"]');
      const values = await page.evaluate(() => {
        const w = window as unknown as { hcaptcha: { getResponse(): string }; grecaptcha: unknown };
        return {
          h: (document.querySelector('textarea[name="h-captcha-response"]') as HTMLTextAreaElement).value,
          g: (document.querySelector('textarea[name="g-recaptcha-response"]') as HTMLTextAreaElement).value,
          api: w.hcaptcha.getResponse(),
          compat: w.grecaptcha === w.hcaptcha,
        };
      });
      expect(values).toEqual({ h: values.api, g: values.api, api: values.api, compat: true });
      await page.click('input[type="submit"]');
      const result = await verdict(page);
      expect(result.posted).toEqual(['email', 'password', 'h-captcha-response', 'g-recaptcha-response']);
      expect(result.outcome).toMatchObject({ success: true, hostname: '127.0.0.1' });
    });

    it('invisible, explicit: hcaptcha.execute(id, {async: true}) resolves {response, key}, posted by fetch', async () => {
      // docs.hcaptcha.com/configuration ("hcaptcha.execute(widgetID, { async: true })") and /invisible.
      const page = await open(
        'hcaptcha',
        `<html><head>
<script>
  window.onLoad = function () {
    window.widgetID = hcaptcha.render('captcha', { sitekey: '${app.appKey}', size: 'invisible' });
  };
</script>
<script src="${script()}?render=explicit&onload=onLoad&recaptchacompat=off" async defer></script>
</head><body><div id="captcha"></div><pre id="out"></pre>
<script>
  async function submit() {
    const { response, key } = await hcaptcha.execute(window.widgetID, { async: true });
    const answer = await fetch('/submit', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ 'h-captcha-response': response }),
    });
    document.body.innerHTML = await answer.text();
    return { response, key };
  }
</script></body></html>`,
      );
      await page.waitForFunction(
        () => typeof (window as unknown as { widgetID?: string }).widgetID === 'string',
      );
      expect(await page.evaluate(() => 'grecaptcha' in window)).toBe(false);
      expect(await page.inputValue('textarea[name="h-captcha-response"]')).toBe('');
      const executed = await page.evaluate(() =>
        (window as unknown as { submit(): Promise<unknown> }).submit(),
      );
      expect(executed).toMatchObject({ key: '' });
      const result = await verdict(page);
      expect(result.outcome).toMatchObject({ success: true });
    });
  });

  it('serves the compatibility build at the vendor paths and its chunks beside them; other names fall through', async () => {
    for (const path of [
      '/turnstile/v0/api.js',
      '/recaptcha/api.js',
      '/recaptcha/enterprise.js',
      '/hcaptcha/1/api.js',
    ]) {
      const res = await fetch(api.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/javascript/);
      expect(res.headers.get('cache-control')).toMatch(/^public, max-age=300\b/);
      const body = await res.text();
      const chunk = body.match(/gatehouse-ui\.[\w-]+\.js/)?.[0];
      expect(chunk, path).toBeTruthy();
      const beside = await fetch(new URL(chunk as string, api.url + path));
      expect(beside.status).toBe(200);
    }
    expect((await fetch(`${api.url}/recaptcha/other.js`)).status).toBe(404);
    expect((await fetch(`${api.url}/hcaptcha/1/gatehouse.js`)).status).toBe(404);
  });
});

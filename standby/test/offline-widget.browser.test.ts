import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseAvailable, type Json, postJson, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { freePort } from '@gatehouse/api/testing/processes';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import { MemoryOfflineTrust } from '@gatehouse/core/offline-trust';
import { openJson } from '@gatehouse/core/sealed';
import {
  chromiumAvailable,
  copyServedWidget,
  expectAccessible,
  focusedClass,
  landmarkPage,
  launchChromium,
  outcome,
  type PageServer,
  press,
  render,
  startPageServer,
  waitFor,
} from '@gatehouse/web/testing';
import pino from 'pino';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../src/config.ts';
import { type RunningStandby, startStandby } from '../src/standby.ts';

/*
 * The image challenges during an outage, in Debian's Chromium: the main API is down (its port refuses
 * connections), the widget the API built verifies through a standby, and the standby serves the main API's kinds, so the
 * widget shows a select grid (or a click picture) from the standby. No widget change: it renders the kind
 * the view names. Keys only, a select grid answered from the standby carries the standby's keyboard
 * proof-of-work and earns an `offline_` token whose reasons say so at the fallback; a click picture answered
 * with the pointer earns one too. The right answers come from opening the standby's sealed challenge with
 * its region's keys (test-only knowledge standing in for a person's eyes).
 */
const run = chromiumAvailable() && (await databaseAvailable());

describe.runIf(run)('the widget during an outage: the standby’s click and select challenges', () => {
  let api: TestApi;
  let standby: RunningStandby;
  let site: PageServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let widgetDir: string;
  let bypassUrl: string;
  type TestApp = { appKey: string; appSecret: string; appId: string; auth: Record<string, string> };
  let selectApp: TestApp;
  let clickApp: TestApp;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const bypassPort = await freePort();
    bypassUrl = `http://127.0.0.1:${bypassPort}`;
    const store = new MemoryConsumptionStore();
    const trust = new MemoryOfflineTrust();
    api = await startTestApi({ STANDBY_BYPASS_URLS: bypassUrl }, undefined, {
      offlineStore: store,
      offlineTrust: trust,
    });
    const made = async (name: string, kind: string) => {
      const a = await api.createApp({ name, risk_policy: { image_kinds: [kind] } });
      return { ...a, auth: { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret } };
    };
    selectApp = await made('standby-widget-select', 'select');
    clickApp = await made('standby-widget-click', 'click');
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_ROLE: 'both',
        STANDBY_BYPASS_PORT: String(bypassPort),
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_PROBE_INTERVAL_MS: '50',
        STANDBY_PROBE_TIMEOUT_MS: '200',
        STANDBY_FAIL_AFTER: '3',
        STANDBY_RECOVER_AFTER: '2',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-widget-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        // Long enough that the work is still going when Verify is pressed; the price is checked over HTTP.
        KEYBOARD_POW_SECONDS: '3',
      }),
      { store, trust, logger: pino({ level: 'silent' }) },
    );
    widgetDir = (await copyServedWidget(api.url)).dir;
    site = await startPageServer({ widgetDir, apiUrl: api.url, secrets: new Map() });
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await standby?.close();
    await api?.close();
    if (widgetDir) rmSync(widgetDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
    expect(pageErrors.splice(0)).toEqual([]);
  });

  /** What the standby sealed into its challenge, opened with its region's keys from the snapshot. */
  function sealedAnswer(a: TestApp, challenge: string): Record<string, unknown> {
    for (const key of standby.snapshots.keyring.challengeKeys()) {
      const opened = openJson(key, challenge, a.appId) as { img?: Record<string, unknown> } | null;
      if (opened?.img) return opened.img;
    }
    throw new Error('no picture in the standby challenge');
  }

  /** The widget on the integrator's page, the main API down: the standby's first init and every submit. */
  async function duringOutage(
    a: TestApp,
    test: (page: Page, init: Json, submits: Request[]) => Promise<void>,
  ) {
    await standby.widget?.refresh();
    await standby.snapshots.refresh();
    context = await browser.newContext({ viewport: { width: 900, height: 700 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const submits: Request[] = [];
    page.on('request', (r) => r.url() === `${bypassUrl}/v1/challenge/submit` && submits.push(r));
    await page.goto(site.page(`/o-${Math.random().toString(36).slice(2)}.html`, landmarkPage('light')));
    await page.waitForFunction(() => 'Gatehouse' in window);
    const init = page
      .waitForResponse((r) => r.url() === `${bypassUrl}/v1/challenge/init` && r.status() === 200, {
        timeout: 45_000,
      })
      .then((r) => r.json() as Promise<Json>);
    await api.pause();
    try {
      await waitFor('the standby to serve', () => standby.health.serving, 15_000);
      await render(page, { appKey: a.appKey, mode: 'embedded', apiServer: api.url, theme: 'light' });
      await test(page, (await init).data, submits);
    } finally {
      await api.resume();
      await waitFor('the standby to stand down', () => !standby.health.serving, 15_000);
    }
  }

  const validateAtFallback = (token: string, a: TestApp) =>
    postJson(`${standby.urls.fallback}/api/validate`, { pass_token: token }, a.auth);

  it('select, keys only: the standby’s grid, its keyboard proof, an offline_ token that says standby, select and keyboard', async () => {
    let token = '';
    await duringOutage(selectApp, async (page, data, submits) => {
      expect(data).toMatchObject({ offline: true, tier: 'hard', image: { kind: 'select' } });
      expect(data.image.keyboard_pow).toBeTruthy();
      const wanted = sealedAnswer(selectApp, data.challenge).indices as number[];
      const tiles = page.locator('.tile');
      await tiles.first().waitFor({ state: 'visible', timeout: 30_000 });
      await expectAccessible(page, 'standby select, nothing chosen');
      await page.locator('input[name="user"]').focus();
      await press(page, 'Tab');
      expect(await focusedClass(page)).toBe('button.check');
      await press(page, 'Tab');
      await expect.poll(() => focusedClass(page)).toBe('button.tile');
      for (let i = 0; i < 9; i++) {
        if (wanted.includes(i)) await press(page, 'Space');
        if (i < 8) await press(page, 'ArrowRight');
      }
      await press(page, 'Tab'); // the new-challenge button
      await press(page, 'Tab'); // Verify
      expect(await focusedClass(page)).toBe('button.btn');
      await press(page, 'Enter');
      const result = await outcome(page, 60_000);
      expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^offline_/) });
      token = (result as { token: string }).token;
      expect(submits).toHaveLength(1);
      expect(submits[0]!.postDataJSON().answer).toEqual({
        input: 'keyboard',
        picks: [...wanted].sort((x, y) => x - y),
        pow: { nonces: expect.any(Array), hashes: expect.any(Array) },
      });
      await expect.poll(() => page.locator('.panel').count()).toBe(0);
      expect(await focusedClass(page)).toBe('button.check');
    });
    const verdict = await validateAtFallback(token, selectApp);
    expect(verdict.status, JSON.stringify(verdict.body)).toBe(200);
    expect(verdict.body.data.captcha_args.risk_reasons).toEqual([
      'standby',
      'tier.hard',
      'challenge.select',
      'challenge.keyboard',
    ]);
  }, 150_000);

  it('click, with the pointer: the standby’s picture, the symbols clicked in order, an offline_ token that says click', async () => {
    let token = '';
    await duringOutage(clickApp, async (page, data, submits) => {
      expect(data).toMatchObject({ offline: true, tier: 'hard', image: { kind: 'click' } });
      const targets = sealedAnswer(clickApp, data.challenge).targets as { x: number; y: number }[];
      const stage = page.locator('.stage');
      await stage.waitFor({ state: 'visible', timeout: 30_000 });
      await expectAccessible(page, 'standby click');
      const box = await stage.boundingBox();
      if (!box) throw new Error('no stage');
      const scale = box.width / (data.image.view.image.width as number);
      // A person's pace: a look first, then one symbol at a time (the verifier refuses faster).
      await page.waitForTimeout(700);
      for (const t of targets) {
        await page.mouse.click(box.x + t.x * scale, box.y + t.y * scale);
        await page.waitForTimeout(250);
      }
      await page.getByRole('button', { name: 'Verify' }).click();
      const result = await outcome(page, 60_000);
      expect(result, JSON.stringify(submits.map((s) => s.postDataJSON().answer))).toMatchObject({
        type: 'success',
        token: expect.stringMatching(/^offline_/),
      });
      token = (result as { token: string }).token;
      expect(Array.isArray(submits[0]!.postDataJSON().answer)).toBe(true);
    });
    const verdict = await validateAtFallback(token, clickApp);
    expect(verdict.status, JSON.stringify(verdict.body)).toBe(200);
    expect(verdict.body.data.captcha_args.risk_reasons).toEqual(['standby', 'tier.hard', 'challenge.click']);
  }, 150_000);
});

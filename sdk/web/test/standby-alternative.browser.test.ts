import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { freePort } from '@gatehouse/api/testing/processes';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import pino from 'pino';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../../standby/src/standby.ts';
import { expectAccessible, landmarkPage, recordSaid, saidSoFar, THEMES, tabTo } from './a11y.ts';
import { chromiumAvailable, copyServedWidget, launchChromium } from './browser.ts';
import { focusedClass, outcome, press, render, waitFor } from './helpers.ts';
import { type PageServer, startPageServer } from './page-server.ts';

/*
 * The accessible alternative during an outage, in Debian's Chromium: the main API is down, the widget
 * verifies through a standby's bypass host, and a person who cannot see the picture (click or select, the main API's
 * default kinds) takes the accessible alternative there, by keyboard only, axe-clean in the light and the
 * dark theme. Real processes: the main API (paused: its port refuses connections), a standby in its own listener with an in-memory store (no Redis), and the
 * integrator's page serving the gatehouse.js the API built (with the standby list in it).
 */
const run = chromiumAvailable() && (await databaseAvailable());

describe.runIf(run)('the accessible alternative on a standby, in Chromium', () => {
  let api: TestApi;
  let standby: RunningStandby;
  let site: PageServer;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let widgetDir: string;
  let bypassUrl: string;
  let app: { appKey: string; appSecret: string; appId: string };
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const bypassPort = await freePort();
    bypassUrl = `http://127.0.0.1:${bypassPort}`;
    const store = new MemoryConsumptionStore();
    api = await startTestApi({ STANDBY_BYPASS_URLS: bypassUrl }, undefined, { offlineStore: store });
    // Not test mode, the default policy: the standby shows a click or select challenge (and so offers the alternative).
    app = await api.createApp({ name: 'standby-alternative' });
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_ROLE: 'bypass',
        STANDBY_BYPASS_PORT: String(bypassPort),
        STANDBY_PROBE_INTERVAL_MS: '50',
        STANDBY_PROBE_TIMEOUT_MS: '200',
        STANDBY_FAIL_AFTER: '3',
        STANDBY_RECOVER_AFTER: '2',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        // Short proofs-of-work (the hard tier pays twice this); the prices are checked over HTTP.
        ALTERNATIVE_POW_SECONDS: '2',
      }),
      { store, logger: pino({ level: 'silent' }) },
    );
    // The widget as the API serves it, on the integrator's site: the page keeps it while the API is away.
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

  for (const theme of THEMES) {
    it(`${theme}: main API down, keyboard only: the link under the standby's click or select challenge, focus on the status, progress said, back to the puzzle and on again, axe-clean, an offline_ token, focus back on the box`, async () => {
      await standby.widget.refresh();
      await standby.snapshots.refresh();
      context = await browser.newContext({ viewport: { width: 900, height: 700 }, colorScheme: theme });
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      // The standby's ticket is held on the wire (a slow network) until the person is back on the
      // alternative for good, so the whole proof-of-work runs while its progress is said. Left to run
      // from the first visit, the work could end while the test was on the puzzle, and then nothing is
      // left to say (two CI runs failed so, at 1 s and at 2 s).
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route(`${bypassUrl}/v1/challenge/alternative`, async (route) => {
        const response = await route.fetch();
        await released;
        await route.fulfill({ response });
      });
      const hosts: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/v1/challenge/'))
          hosts.push(`${new URL(r.url()).origin}${new URL(r.url()).pathname}`);
      });
      // The kind the standby served: the main API's defaults, never the slide (docs/failover.md).
      const served = page.waitForResponse(
        (r) => r.url() === `${bypassUrl}/v1/challenge/init` && r.status() === 200,
        { timeout: 45_000 },
      );
      await page.goto(site.page(`/s-${theme}.html`, landmarkPage(theme)));
      await page.waitForFunction(() => 'Gatehouse' in window);
      await api.pause();
      try {
        await waitFor('the standby to serve', () => standby.health.serving, 15_000);
        await render(page, { appKey: app.appKey, mode: 'embedded', apiServer: api.url, theme });
        await page.locator('.stage').waitFor({ state: 'visible', timeout: 30_000 });
        expect(hosts).toContain(`${bypassUrl}/v1/challenge/init`);
        const kind = ((await (await served).json()) as { data: { image: { kind: string } } }).data.image.kind;
        expect(['click', 'select']).toContain(kind);
        await expectAccessible(page, `${theme} standby ${kind}`);

        await page.locator('input[name="user"]').focus();
        await tabTo(page, 'button.link');
        expect(await page.locator('button.link').textContent()).toMatch(/can't see the puzzle/i);
        await recordSaid(page);
        await press(page, 'Enter');
        await expect.poll(() => focusedClass(page), { timeout: 10_000 }).toBe('p.alt-status');
        await page.locator('[role=progressbar]').waitFor({ state: 'visible' });
        await expectAccessible(page, `${theme} standby alternative in progress`);
        // Back to the puzzle and on again: one ticket, from the standby.
        await press(page, 'Tab');
        expect(await page.locator('button.link').textContent()).toBe('Back to the puzzle');
        await press(page, 'Enter');
        // Focus on the challenge's own control: the click stage, or the select grid's first tile.
        await expect.poll(() => focusedClass(page)).toBe(kind === 'click' ? 'div.stage pick' : 'button.tile');
        await tabTo(page, 'button.link');
        await press(page, 'Enter');
        await expect.poll(() => focusedClass(page), { timeout: 10_000 }).toBe('p.alt-status');
        release();

        const result = await outcome(page, 120_000);
        expect(result, JSON.stringify(result)).toMatchObject({ type: 'success' });
        expect((result as { token: string }).token).toMatch(/^offline_/);
        expect(hosts.filter((h) => h === `${bypassUrl}/v1/challenge/alternative`)).toHaveLength(1);
        expect(hosts).toContain(`${bypassUrl}/v1/challenge/submit`);
        const said = await saidSoFar(page);
        expect(
          said.some((m) => /^\d+ % done$/.test(m)),
          said.join(' / '),
        ).toBe(true);
        await expect.poll(() => page.locator('.panel').count()).toBe(0);
        expect(await focusedClass(page)).toBe('button.check');
        await expectAccessible(page, `${theme} standby alternative, done`);
      } finally {
        await api.resume();
        await waitFor('the standby to stand down', () => !standby.health.serving, 15_000);
      }
    }, 150_000);
  }
});

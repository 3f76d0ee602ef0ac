import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromiumAvailable, launchChromium } from '@gatehouse/web/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable } from './harness.ts';
import { firstUrl, type Started, startStartTs } from './start-process.ts';

/**
 * The demo site as a person uses it, in Chromium: `npm start`, open the login page, the widget verifies
 * invisibly, sign in. Headless Chromium under automation scores high (webdriver, headless hints), so the
 * demo app is put in test mode first: what is under test here is the page, the widget and the backend's
 * caller rule, not the risk engine.
 */
const run = chromiumAvailable() && (await databaseAvailable());

describe.runIf(run)('demo page in Chromium (invisible path)', () => {
  let started: Started;
  let browser: Browser;
  let dataDir: string;
  let demo: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-browser-'));
    started = await startStartTs({ PORT: '0', DEMO_PORT: '0', DATA_DIR: dataDir });
    const api = firstUrl(started.banner.get('API'));
    demo = firstUrl(started.banner.get('Demo login'));
    const { app_key } = JSON.parse(readFileSync(join(dataDir, 'demo-app.json'), 'utf8'));
    const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const patched = await fetch(`${api}/admin/v1/apps/${app_key}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ test_mode: true }),
    });
    expect(patched.status).toBe(200);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    started?.child.kill('SIGKILL');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('fills the token without interaction, and the backend signs the user in', async () => {
    const page = await browser.newPage();
    await page.goto(demo);
    const token = page.locator('input[name="gatehouse-token"]');
    await expect
      .poll(async () => (await token.count()) > 0 && (await token.inputValue()), { timeout: 60_000 })
      .toMatch(/^pt_/);
    await page.fill('input[name="username"]', 'demo');
    await page.fill('input[name="password"]', 'gatehouse');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.textContent('body'), { timeout: 30_000 }).toContain('Signed in as demo');
    await page.screenshot({ path: join(dataDir, 'signed-in.png') });
  }, 120_000);

  it("speaks the browser's language: Norwegian no-NO gets Bokmål, Arabic is laid out right to left", async () => {
    for (const [locale, lang, dir, verified] of [
      ['no-NO', 'nb', 'ltr', 'Verifisert'],
      ['ar-EG', 'ar', 'rtl', 'تم التحقق'],
    ] as const) {
      const context = await browser.newContext({ locale });
      const page = await context.newPage();
      await page.goto(demo);
      const token = page.locator('input[name="gatehouse-token"]');
      await expect
        .poll(async () => (await token.count()) > 0 && (await token.inputValue()), { timeout: 60_000 })
        .toMatch(/^pt_/);
      // The widget's own element (the one holding its shadow root) carries its language and direction.
      const host = await page.evaluate(() => {
        const el = Array.from(document.querySelectorAll('#gatehouse *')).find(
          (e) => e.shadowRoot,
        ) as HTMLElement;
        return { lang: el.lang, dir: el.dir };
      });
      expect(host, locale).toEqual({ lang, dir });
      await expect
        .poll(() => page.locator('[role="status"]').first().textContent(), { timeout: 20_000 })
        .toBe(verified);
      await context.close();
    }
  }, 120_000);
});

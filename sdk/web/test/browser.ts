import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { buildWidget } from '../build.ts';
import { type PageServer, startPageServer } from './page-server.ts';

/** Debian's Chromium; CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run here. A missing Chromium skips them with a loud message outside CI
 * and throws under CI=true, so CI can never pass by skipping.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  const message = `Chromium is not installed at ${CHROMIUM_PATH}: the widget's browser tests cannot run (apt-get install chromium).`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
  return false;
}

/** Launches headless Chromium with the flags that keep it quiet and offline. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * The fixtures every widget browser suite shares, registered as the calling describe's hooks: the widget
 * built into a temporary folder, a real API, the integrator's page server on its own origin and one
 * Chromium. Each test's pages come from `newPage`; after each test the current context is closed and no
 * page may have thrown.
 */
/**
 * The widget as an API at `apiUrl` serves it (the loader and every chunk it names, each asserted 200), copied
 * into a fresh folder for an integrator's site: a page keeps it while the API is away.
 */
export async function copyServedWidget(apiUrl: string): Promise<{ dir: string; loader: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-widget-'));
  const loader = await (await fetch(`${apiUrl}/widget/gatehouse.js`)).text();
  writeFileSync(join(dir, 'gatehouse.js'), loader);
  for (const chunk of new Set(loader.match(/gatehouse-(ui|pow|i18n)\.[\w-]+\.js/g) ?? [])) {
    const res = await fetch(`${apiUrl}/widget/${chunk}`);
    expect(res.status, chunk).toBe(200);
    writeFileSync(join(dir, chunk), Buffer.from(await res.arrayBuffer()));
  }
  return { dir, loader };
}

export interface WidgetBrowserSuite {
  readonly api: TestApi;
  readonly site: PageServer;
  readonly browser: Browser;
  /** A page in a new browser context (900x700, en-GB unless `options` override), its errors recorded. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Closes the current context, if any (the next `newPage` opens another). */
  closeContext(): Promise<void>;
}

export function widgetBrowserSuite(
  tmpPrefix: string,
  secrets = new Map<string, string>(),
): WidgetBrowserSuite {
  let api: TestApi;
  let site: PageServer;
  let browser: Browser;
  let widgetDir: string | undefined;
  let context: BrowserContext | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    widgetDir = mkdtempSync(join(tmpdir(), tmpPrefix));
    await buildWidget({ outDir: widgetDir });
    api = await startTestApi();
    site = await startPageServer({ widgetDir, apiUrl: api.url, secrets });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await api?.close();
    if (widgetDir) rmSync(widgetDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
    expect(pageErrors.splice(0)).toEqual([]);
  });

  return {
    get api() {
      return api;
    },
    get site() {
      return site;
    },
    get browser() {
      return browser;
    },
    async newPage(options = {}) {
      context = await browser.newContext({
        viewport: { width: 900, height: 700 },
        locale: 'en-GB',
        ...options,
      });
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      return page;
    },
    async closeContext() {
      await context?.close();
      context = undefined;
    },
  };
}

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child, freePort, waitUntilReady } from '@gatehouse/api/testing/processes';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChallenge } from '../../../api/src/challenges/sealed-challenge.ts';
import { DEMO_USER } from '../../../api/src/demo/login.ts';
import { openJson } from '../../../core/src/sealed.ts';
import { offlineKeysFor, type StandbyKeyEntry } from '../../../core/src/standby-keys.ts';
import { TokenKeys } from '../../../core/src/tokens/index.ts';
import { chromiumAvailable, launchChromium } from './browser.ts';
import { dragLikeAHuman } from './helpers.ts';

/*
 * The continuity drill in real Chromium (docs/widget-failover.md, "The browser drill"), with the processes
 * separate as deployed: the main API, one standby process running both roles, and the demo site (its
 * backend validates with the Node SDK).
 * Visitors in every page state that doc lists sign in while the main API is killed with SIGKILL, and
 * one page left open across the restart signs in after it. A co_ token is never shown as verified (the box
 * must say `unverified` whenever the field holds one). Prints the counts.
 *
 * The drill's app is in test mode (the standby serves it a one-hash proof-of-work), so the row "a page
 * that had shown an image challenge before" runs on a second app, not in test mode and pinned to the slide,
 * behind its own demo process: the page solves the main API's slide before the outage, then the standby's
 * slide (and its full proof-of-work, from the standby's widget mirror) during it. The slide answers come
 * from opening the sealed challenges with the keys the test holds (the API's token key, the standby's
 * snapshot): test-only knowledge standing in for a person's eyes; the drag itself is a human-like one.
 */
const run = chromiumAvailable();

const FAST_PROBES = {
  STANDBY_PROBE_INTERVAL_MS: '100',
  STANDBY_PROBE_TIMEOUT_MS: '300',
  STANDBY_FAIL_AFTER: '3',
  STANDBY_RECOVER_AFTER: '3',
};

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`drill: timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(run)('continuity drill in Chromium: API, standby and demo as processes, API SIGKILLed', () => {
  const adminToken = randomBytes(24).toString('base64url');
  const syncToken = `st_${randomBytes(24).toString('base64url')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-browser-drill-'));
  let apiEnv: Record<string, string>;
  let mainUrl: string;
  let bypassUrl: string;
  let fallbackUrl: string;
  let demoUrl: string;
  let slideDemoUrl: string;
  const tokenKey = randomBytes(32);
  let api: Child;
  let standby: Child;
  let demo: Child;
  let slideDemo: Child;
  let slideAppKey: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** Pages whose box said "done" while their field held a co_ token. */
  const coShownVerified: string[] = [];

  const startApi = async () => {
    api = new Child('main API', 'api/src/server.ts', apiEnv);
    await waitUntilReady(api, `${mainUrl}/readyz`, 90_000);
  };
  const serving = async () =>
    ((await (await fetch(`${bypassUrl}/status`)).json()) as { serving: boolean }).serving;

  beforeAll(async () => {
    const [apiPort, bypassPort, fallbackPort, demoPort, slideDemoPort] = (await Promise.all(
      [1, 2, 3, 4, 5].map(() => freePort()),
    )) as [number, number, number, number, number];
    mainUrl = `http://127.0.0.1:${apiPort}`;
    bypassUrl = `http://127.0.0.1:${bypassPort}`;
    fallbackUrl = `http://127.0.0.1:${fallbackPort}`;
    demoUrl = `http://127.0.0.1:${demoPort}`;
    slideDemoUrl = `http://127.0.0.1:${slideDemoPort}`;
    apiEnv = {
      HOST: '127.0.0.1',
      PORT: String(apiPort),
      DATA_DIR: join(dataDir, 'api'),
      GATEHOUSE_ADMIN_TOKEN: adminToken,
      // Known to the test, so it can read the main API's slide answers.
      GATEHOUSE_TOKEN_KEY: tokenKey.toString('base64'),
      STANDBY_SYNC_TOKEN: syncToken,
      STANDBY_BYPASS_URLS: bypassUrl,
      STANDBY_FALLBACK_URLS: fallbackUrl,
    };
    standby = new Child('standby (both roles)', 'standby/src/server.ts', {
      ...FAST_PROBES,
      STANDBY_ROLE: 'both',
      STANDBY_HOST: '127.0.0.1',
      STANDBY_BYPASS_PORT: String(bypassPort),
      STANDBY_FALLBACK_PORT: String(fallbackPort),
      MAIN_API_URL: mainUrl,
      STANDBY_DATA_DIR: join(dataDir, 'standby'),
      STANDBY_SYNC_TOKEN: syncToken,
      STANDBY_SNAPSHOT_INTERVAL_MS: '1000',
    });
    await startApi();
    // The widget is built on the API's first request for it (once per process).
    expect((await fetch(`${mainUrl}/widget/gatehouse.js`)).status).toBe(200);
    const createApp = async (name: string, settings: Record<string, unknown>) => {
      const created = await fetch(`${mainUrl}/admin/v1/apps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, ...settings }),
      });
      const body = (await created.json()) as { data: { app_key: string; app_secret: string } };
      expect(created.status, JSON.stringify(body)).toBe(201);
      return body.data;
    };
    const startDemo = async (name: string, port: number, app: { app_key: string; app_secret: string }) => {
      const child = new Child(name, 'api/src/demo/main.ts', {
        DEMO_PORT: String(port),
        DEMO_API_URL: mainUrl,
        DEMO_APP_KEY: app.app_key,
        DEMO_APP_SECRET: app.app_secret,
        DEMO_STANDBY_URLS: bypassUrl,
        DEMO_BACKUP_URLS: fallbackUrl,
      });
      await waitUntilReady(child, `http://127.0.0.1:${port}/healthz`, 60_000);
      return child;
    };
    const rateLimit = { ip_per_minute: 1_000_000, high_risk_ip_per_minute: 1_000_000 };
    const drillApp = await createApp('browser-drill', {
      test_mode: true,
      risk_policy: { rate_limit: rateLimit },
    });
    const slideApp = await createApp('browser-drill-slide', {
      test_mode: false,
      risk_policy: { rate_limit: rateLimit, invisible_below: 0, image_below: 101, image_kinds: ['slide'] },
    });
    slideAppKey = slideApp.app_key;
    [demo, slideDemo] = await Promise.all([
      startDemo('demo', demoPort, drillApp),
      startDemo('demo (slide app)', slideDemoPort, slideApp),
    ]);
    // The standby holds the app and the widget's files before the outage.
    await waitUntilReady(standby, `${bypassUrl}/status`, 60_000, (s) => s.snapshot.apps >= 2);
    await until(
      'the standby to copy the widget',
      async () => (await fetch(`${bypassUrl}/widget/gatehouse.js`)).ok,
      30_000,
    );
    browser = await launchChromium();
  }, 150_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await Promise.all([demo?.stop(), slideDemo?.stop(), standby?.stop(), api?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function visitor(): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    return page;
  }

  /** The widget's state as the page shows it; records a co_ shown as verified. */
  async function widget(page: Page) {
    const seen = await page.evaluate(() => {
      const field = document.querySelector<HTMLInputElement>('input[name="gatehouse-token"]');
      const box = document.querySelector('#gatehouse > div')?.shadowRoot?.querySelector<HTMLElement>('.box');
      return { token: field?.value ?? '', state: box?.dataset.state ?? '' };
    });
    if (seen.token.startsWith('co_') && seen.state === 'done') coShownVerified.push(page.url());
    return seen;
  }

  /** Waits for a token of the expected kind in the form field. */
  async function token(page: Page, prefix: RegExp) {
    await until(
      `a ${prefix} token`,
      async () => {
        const { token } = await widget(page);
        return prefix.test(token);
      },
      30_000,
    );
  }

  /** The slide app's id and the standby's challenge keys, from the snapshot the standby keeps on disk. */
  function standbySnapshot() {
    const snapshot = JSON.parse(readFileSync(join(dataDir, 'standby', 'snapshot.json'), 'utf8')) as {
      offline_keys: StandbyKeyEntry[];
      apps: { id: string; app_key: string }[];
    };
    const app = snapshot.apps.find((a) => a.app_key === slideAppKey);
    if (!app) throw new Error('drill: the slide app is not in the standby snapshot');
    const keys = snapshot.offline_keys
      .filter((k) => k.status !== 'revoked')
      .map((k) => offlineKeysFor(k).challenge);
    return { appId: app.id, keys };
  }

  /** The slide answer sealed in an init answer, from the main API or from the standby. */
  function slideAnswer(init: { challenge: string }, from: 'main' | 'standby'): number {
    const { appId, keys } = standbySnapshot();
    if (from === 'main') {
      const sealed = openChallenge(new TokenKeys(tokenKey), appId, init.challenge);
      if (sealed?.img?.kind !== 'slide') throw new Error('drill: no slide in the main API challenge');
      return (sealed.img.answer as { x: number }).x;
    }
    for (const key of keys) {
      const opened = openJson(key, init.challenge, appId) as { img?: { x: number } } | null;
      if (opened?.img) return opened.img.x;
    }
    throw new Error('drill: no slide in the standby challenge');
  }

  /** Waits for the next challenge init from `host`, then drags the slide there like a person would. */
  async function solveSlide(
    page: Page,
    host: string,
    from: 'main' | 'standby',
    start: () => Promise<unknown>,
  ) {
    const init = page.waitForResponse(
      (r) => r.url().startsWith(host) && r.url().endsWith('/v1/challenge/init') && r.status() === 200,
      { timeout: 45_000 },
    );
    await start();
    const body = (await (await init).json()) as { data: { challenge: string; image?: { kind: string } } };
    expect(body.data.image?.kind).toBe('slide');
    const handle = page.locator('.handle');
    await handle.waitFor({ state: 'visible', timeout: 30_000 });
    const stage = await page.locator('.stage').boundingBox();
    await dragLikeAHuman(page, handle, slideAnswer(body.data, from), (stage?.width ?? 300) / 300);
  }

  /** Signs in on the demo with whatever token the field holds; the outcome the demo shows. */
  async function signIn(page: Page): Promise<string> {
    await widget(page);
    await page.fill('input[name="username"]', DEMO_USER.username);
    await page.fill('input[name="password"]', DEMO_USER.password);
    await page.click('button[type="submit"]');
    await page.waitForSelector('main[data-outcome]', { timeout: 45_000 });
    return (await page.evaluate(() => document.querySelector('main')?.dataset.outcome)) ?? '';
  }

  it('every visitor of an outage, plus a page left open across the recovery, signs in; no co_ shown as verified', async () => {
    const outcomes: Record<string, string> = {};
    const attempt = async (row: string, fn: () => Promise<string>) => {
      outcomes[row] = await fn().catch((error) => `failed: ${(error as Error).message.split('\n')[0]}`);
    };

    // Before the outage.
    const cached = await visitor(); // loader in the HTTP cache
    await cached.goto(`${demoUrl}/login`);
    await token(cached, /^pt_/);
    const invisibleDone = await visitor(); // invisible tier done earlier, new verification during the outage
    await invisibleDone.goto(`${demoUrl}/login`);
    await token(invisibleDone, /^pt_/);
    const filesLoaded = await visitor(); // the widget's files loaded earlier
    await filesLoaded.goto(`${demoUrl}/login`);
    await token(filesLoaded, /^pt_/);
    const ptBefore = await visitor(); // pt_ issued before the outage, submitted during it
    await ptBefore.goto(`${demoUrl}/login`);
    await token(ptBefore, /^pt_/);
    const imageShown = await visitor(); // shown (and solved) the main API's slide before the outage
    const workers: string[] = [];
    imageShown.on('response', (r) => {
      if (r.url().includes('/gatehouse-pow.')) workers.push(`${r.status()} ${r.url()}`);
    });
    await solveSlide(imageShown, mainUrl, 'main', () => imageShown.goto(`${slideDemoUrl}/login`));
    await token(imageShown, /^pt_/);
    const workersBefore = workers.length;

    // The outage: SIGKILL, as a crash.
    await api.stop('SIGKILL');
    const killedAt = Date.now();
    await until('the standby to serve', serving, 20_000);
    const switchedMs = Date.now() - killedAt;

    await attempt('page first opened during the outage, nothing cached', async () => {
      const page = await visitor();
      await page.goto(`${demoUrl}/login`);
      await token(page, /^offline_/);
      return signIn(page);
    });
    await attempt('same, loader in the HTTP cache', async () => {
      await cached.reload();
      await token(cached, /^offline_/);
      return signIn(cached);
    });
    await attempt('invisible tier done earlier; new verification during the outage', async () => {
      await invisibleDone.evaluate(() => window.Gatehouse.reverify('#gatehouse'));
      await token(invisibleDone, /^offline_/);
      return signIn(invisibleDone);
    });
    await attempt("widget's files loaded earlier; new verification during the outage", async () => {
      await filesLoaded.evaluate(() =>
        window.Gatehouse.get(document.querySelector('#gatehouse') as HTMLElement)?.reset(),
      );
      await filesLoaded.evaluate(() =>
        window.Gatehouse.get(document.querySelector('#gatehouse') as HTMLElement)?.execute(),
      );
      await token(filesLoaded, /^offline_/);
      return signIn(filesLoaded);
    });
    await attempt(
      'page that had shown an image challenge before; new verification during the outage',
      async () => {
        await solveSlide(imageShown, bypassUrl, 'standby', () =>
          imageShown.evaluate(() => {
            void window.Gatehouse.reverify('#gatehouse');
          }),
        );
        await token(imageShown, /^offline_/);
        // The proof-of-work worker this page ran during the outage came from the standby's widget mirror.
        const during = workers.slice(workersBefore);
        if (!during.some((w) => w.startsWith(`200 ${bypassUrl}/widget/`)))
          throw new Error(`no proof-of-work worker from the standby: ${JSON.stringify(workers)}`);
        return signIn(imageShown);
      },
    );
    await attempt('pt_ issued before the outage, submitted during it', () => signIn(ptBefore));
    const acrossRecovery = await visitor();
    await attempt('page opened during the outage, left open across the recovery (opened)', async () => {
      await acrossRecovery.goto(`${demoUrl}/login`);
      await token(acrossRecovery, /^offline_/);
      return 'signed-in';
    });

    // The recovery: the main API restarts on its data; the standby stands down.
    await startApi();
    await until('the standby to stand down', async () => !(await serving()), 20_000);
    await attempt('page left open across the recovery', () => signIn(acrossRecovery));
    await attempt('page opened after the recovery', async () => {
      const page = await visitor();
      await page.goto(`${demoUrl}/login`);
      await token(page, /^pt_/);
      return signIn(page);
    });
    delete outcomes['page opened during the outage, left open across the recovery (opened)'];

    const rows = Object.entries(outcomes);
    const signedIn = rows.filter(([, o]) => o === 'signed-in').length;
    console.log(
      `\ncontinuity drill (Chromium): visitors ${rows.length}, signed in ${signedIn}, failed ${rows.length - signedIn}; standby serving ${switchedMs} ms after SIGKILL\n${rows
        .map(([row, o]) => `  ${o === 'signed-in' ? 'ok  ' : 'FAIL'} ${row}: ${o}`)
        .join('\n')}\n`,
    );
    expect(coShownVerified).toEqual([]);
    expect(outcomes).toEqual(Object.fromEntries(rows.map(([row]) => [row, 'signed-in'])));
  }, 110_000);
});

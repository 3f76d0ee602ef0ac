import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { solveChallenge } from '@gatehouse/node/headless';
import { chromiumAvailable, launchChromium } from '@gatehouse/web/testing';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './harness.ts';

/*
 * The console and the API reference in real Chromium: sign in with the admin token (exchanged for a
 * session that expires and ends at sign-out; the browser keeps no copy of the token), manage an app from
 * creation to rotation, preview the risk policy, read usage, decisions and the standby's state; an app
 * declared by a custom resource is read-only. Every view is checked with axe-core, and the page's CSP
 * must never be violated. CONSOLE_SCREENSHOTS=1 writes the screenshots docs/console.md shows.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const SHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? join(ROOT, 'docs/images') : undefined;
/** Every view in light and dark, for people to look at (not committed): CONSOLE_ARTIFACTS_DIR or a temp folder. */
const ARTIFACTS = process.env.CONSOLE_ARTIFACTS_DIR ?? join(tmpdir(), 'gatehouse-console-screenshots');
const run = chromiumAvailable();

describe.runIf(run)('web console in Chromium', { timeout: 120_000 }, () => {
  let api: TestApi;
  let browser: Browser;
  let page: Page;
  const violations: string[] = [];
  const admin = () => ({ authorization: `Bearer ${api.runtime.adminToken}` });
  /** How far the API's session clock is ahead of the real one (moved to expire sessions without waiting). */
  let clockAhead = 0;

  beforeAll(async () => {
    api = await startTestApi({ STANDBY_BYPASS_URLS: 'http://127.0.0.1:9' }, undefined, {
      consoleClock: () => Date.now() + clockAhead,
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.url });
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    page.on('pageerror', (e) => violations.push(`page error: ${e.message}`));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  /** An element's text with its runs of white space as single spaces. */
  const spaced = async (l: Locator) => (await l.textContent())!.replace(/\s+/g, ' ');

  /** axe-core on the current page: no violation of any WCAG 2.x A/AA rule. */
  async function expectAccessible(label: string) {
    await page.evaluate(AXE);
    const result = (await page.evaluate(() =>
      // biome-ignore lint/suspicious/noExplicitAny: axe is the global the script above defined.
      (window as any).axe.run(document, {
        runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'],
      }),
    )) as { violations: { id: string; help: string; nodes: { target: string[] }[] }[] };
    const found = result.violations.map(
      (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
    );
    expect(found, label).toEqual([]);
  }

  /**
   * One view in both themes, as the system's preference sets them: axe-core finds nothing in either
   * (contrast included), the dark one is dark, and each is screenshotted.
   */
  async function checkView(label: string, name: string) {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), label).toBe(
        scheme === 'dark' ? 'rgb(21, 24, 28)' : 'rgb(255, 255, 255)',
      );
      await expectAccessible(`${label} (${scheme})`);
      const path = join(ARTIFACTS, `console-${name}-${scheme}.png`);
      await page.screenshot({ path, fullPage: true });
      expect(existsSync(path)).toBe(true);
      if (SHOTS && (scheme === 'light' || name === 'app')) {
        mkdirSync(SHOTS, { recursive: true });
        const file = scheme === 'light' ? `console-${name}.png` : `console-${name}-dark.png`;
        await page.screenshot({ path: join(SHOTS, file), fullPage: true });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  it('refuses a wrong token, signs in with the admin token and lists the apps', async () => {
    await api.createApp({ name: 'shop' });
    await api.post(
      '/admin/v1/apps',
      {
        name: 'checkout (from Kubernetes)',
        managed_by: { kind: 'App', namespace: 'payments', name: 'checkout' },
      },
      admin(),
    );
    await page.goto(`${api.url}/console`);
    await page.getByLabel('Admin token').waitFor();
    // Nothing invites a password manager to store the token.
    expect(await page.getByLabel('Admin token').getAttribute('autocomplete')).toBe('off');
    await checkView('sign-in', 'sign-in');
    await page.getByLabel('Admin token').fill('at_not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not the admin token' }).waitFor();
    await page.getByLabel('Admin token').fill(api.runtime.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Apps' }).waitFor();
    await page.getByRole('link', { name: 'shop' }).waitFor();
    await expect(page.getByRole('row', { name: /checkout/ }).textContent()).resolves.toContain(
      'App payments/checkout',
    );
    // The browser keeps no copy of the admin token: not in storage, not in the field, not in a cookie.
    const token = api.runtime.adminToken;
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
    expect(stored).toBe('{}');
    expect(await page.content()).not.toContain(token);
    const cookies = await page.context().cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({
      name: 'gatehouse_console',
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
    });
    expect(cookies[0]!.value).not.toContain(token);
    expect(await page.evaluate(() => document.cookie)).toBe('');
  });

  it('creates an app and shows its secret once, and the secret authenticates', async () => {
    await page.getByLabel('New app name').fill('blog');
    await page.getByRole('button', { name: 'Create app' }).click();
    const secret = (await page.locator('.secret-value').textContent())!;
    expect(secret).toMatch(/^sk_/);
    const key = (await page.locator('.secret code').nth(1).textContent())!;
    const verdict = await api.post(
      '/v1/validate',
      { pass_token: 'pt_x' },
      { 'X-App-Key': key, 'X-App-Secret': secret },
    );
    expect(verdict.body.error).not.toMatch(/^invalid_app/);
    await checkView('apps with a new secret', 'apps');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.locator('.secret-value').count()).toBe(0);
  });

  it('changes every setting of an app, previews its risk policy and rotates its secret and key', async () => {
    const app = await api.createApp({ name: 'store' });
    const auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    // Traffic for the charts and the decisions: solved challenges, validations, a replay.
    await api.runtime.apps.update(app.appKey, { test_mode: true });
    for (let i = 0; i < 3; i++) {
      const solved = await solveChallenge({
        baseUrl: api.url,
        appKey: app.appKey,
        action: 'login',
        clientOnlyFallback: false,
      });
      await api.post('/v1/validate', { pass_token: solved.passToken }, auth);
      if (i === 0) await api.post('/v1/validate', { pass_token: solved.passToken }, auth);
    }
    await api.runtime.apps.update(app.appKey, { test_mode: false });
    await page.goto(`${api.url}/console#/apps/${app.appKey}`);
    await page.getByRole('heading', { name: 'store' }).waitFor();

    await page.getByLabel('Plan').selectOption('pro');
    await page.getByLabel(/Server token required/).check();
    await page.getByLabel('Pass token lifetime (seconds)').fill('120');
    await page.getByLabel('Client IP mismatch').selectOption('reject');
    await page.getByLabel('Allowed domains').fill('store.test, www.store.test');
    await page.getByLabel('Monthly quota override').fill('5000');
    await page.getByLabel('Image challenge below score').fill('101');
    await page.getByLabel('Invisible below score').fill('0');
    // The slide is opt-in (not in the default kinds): the form starts with click and select.
    expect(await page.getByLabel('slide').isChecked()).toBe(false);
    await page.getByLabel('slide').check();
    await page.getByLabel('click').uncheck();
    await page.getByLabel('select').uncheck();
    await page.getByLabel('Other policy fields (JSON)').fill('{"rate_limit": ');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'must be a JSON object' }).waitFor();
    await page
      .getByLabel('Other policy fields (JSON)')
      .fill('{"rate_limit": {"ip_per_minute": 500, "high_risk_ip_per_minute": 100}}');

    // The preview judges the policy as the form holds it, before it is saved.
    await page.getByLabel('Automation reported (webdriver)').check();
    await page.getByRole('button', { name: 'Preview' }).click();
    const result = page.locator('.result');
    await result.waitFor();
    expect(await result.textContent()).toMatch(/→ image \(one of: slide\)/);
    expect(await result.textContent()).toMatch(/webdriver/);

    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    const saved = (await (
      await fetch(`${api.url}/admin/v1/apps/${app.appKey}`, { headers: admin() })
    ).json()) as {
      data: Record<string, unknown>;
    };
    expect(saved.data).toMatchObject({
      plan: 'pro',
      server_token_required: true,
      pass_token_ttl: 120,
      client_ip_policy: 'reject',
      allowed_domains: ['store.test', 'www.store.test'],
      monthly_quota: 5000,
      risk_policy: {
        invisible_below: 0,
        image_below: 101,
        high: 'hard',
        image_kinds: ['slide'],
        rate_limit: { ip_per_minute: 500, high_risk_ip_per_minute: 100 },
      },
    });

    // Usage from the rollups, and the decisions with their reasons.
    await page.getByRole('figure', { name: 'Challenges by tier' }).waitFor();
    expect(await page.getByRole('figure', { name: 'Validations by verdict' }).textContent()).toMatch(
      /token_already_used\s*1/,
    );
    await page
      .locator('p', {
        hasText: /Quota \d{4}-\d{2}: 3 of 5,000 challenges .* solve rate 100 % \(3 solved, 0 failed\)/,
      })
      .waitFor();
    await page.getByRole('heading', { name: 'Recent risk decisions' }).waitFor();
    await checkView('app', 'app');

    // Nothing breaks on one click: each destructive action asks first, naming what breaks and when.
    const dialog = page.getByRole('dialog');
    await page.getByLabel('Old secret keeps working for (seconds)').fill('600');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await dialog.filter({ hasText: 'Rotate the secret of store?' }).waitFor();
    expect(await spaced(dialog)).toMatch(/stops working in 10 minutes: .* invalid_app_secret/);
    await checkView('rotate-secret confirmation', 'confirm-rotate-secret');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await dialog.count()).toBe(0);
    const kept = await api.post('/v1/validate', { pass_token: 'pt_x' }, auth);
    expect(kept.body.error).toBe('token_not_found');
    expect(await page.locator('.secret-value').count()).toBe(0);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await dialog.getByRole('button', { name: 'Rotate secret now' }).click();
    const rotated = (await page.locator('.secret-value').textContent())!;
    expect(rotated).toMatch(/^sk_/);
    expect(rotated).not.toBe(app.appSecret);
    await page.getByText(/The previous secret works until/).waitFor();
    // Copy buttons put exactly what is shown on the clipboard.
    await page.getByRole('button', { name: 'Copy app secret' }).click();
    await page.locator('.secret .copy-state', { hasText: 'Copied' }).first().waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rotated);

    // The secret box stays open through a key rotation and shows the key that goes with the secret now.
    await page.getByLabel('Old key keeps working for (seconds)').fill('600');
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await dialog.filter({ hasText: 'Rotate the key of store?' }).waitFor();
    expect(await spaced(dialog)).toContain(`current key ${app.appKey} stops working in 10 minutes`);
    await dialog.getByRole('button', { name: 'Rotate key now' }).click();
    await page.locator('.app-key', { hasText: /The previous key ak_\S+ works until \d{4}-/ }).waitFor();
    const newKey = (await api.runtime.apps.findById(app.appId))!.appKey;
    expect(newKey).not.toBe(app.appKey);
    await page
      .getByRole('status')
      .filter({ hasText: `New key issued: ${newKey}.` })
      .waitFor();
    expect(await page.locator('.app-key').textContent()).toContain(app.appKey);
    expect(page.url()).toContain(`#/apps/${newKey}`);
    expect(await page.locator('.secret-key').textContent()).toBe(newKey);
    expect(await page.locator('.secret-value').textContent()).toBe(rotated);
    await page.getByRole('button', { name: 'Copy app key' }).first().click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(newKey);
    await expectAccessible('app after a key rotation');
    await page.getByRole('button', { name: 'I have stored it' }).click();

    // The embed snippets name this app's key and this server, and what they name answers.
    const embed = page.getByRole('region', { name: 'Embed' });
    const widgetTag = (await embed.locator('pre').nth(0).textContent())!;
    expect(widgetTag).toContain(`data-gatehouse-app-key="${newKey}"`);
    const widgetUrl = /src="([^"]+)"/.exec(widgetTag)![1]!;
    expect(widgetUrl).toBe(`${api.url}/widget/gatehouse.js`);
    expect((await fetch(widgetUrl)).status).toBe(200);
    expect(await embed.locator('pre').nth(1).textContent()).toContain(`appKey: '${newKey}'`);
    const siteverify = (await embed.locator('pre').nth(2).textContent())!.split('\n')[0]!;
    expect(siteverify).toBe(`${api.url}/turnstile/v0/siteverify`);
    const vendor = await api.post(siteverify.slice(api.url.length), { secret: rotated, response: 'pt_x' });
    expect(vendor.body['error-codes']).not.toContain('invalid-input-secret');
    await page.getByRole('button', { name: /^Copy Widget tag/ }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(widgetTag);

    await page.getByRole('button', { name: 'Disable app' }).click();
    await dialog.filter({ hasText: 'Disable store?' }).waitFor();
    expect(await spaced(dialog)).toMatch(/At once, .* app_disabled: .* stops passing/);
    await dialog.getByRole('button', { name: 'Disable app now' }).click();
    await page.getByRole('button', { name: 'Enable app' }).waitFor();
    expect((await api.runtime.apps.require(app.appKey)).disabledAt).not.toBeNull();

    // Another app's page starts afresh: the preview's visitor and result do not carry over.
    await page.getByRole('link', { name: 'Apps', exact: true }).click();
    await page.getByRole('link', { name: 'shop', exact: true }).click();
    await page.getByRole('heading', { name: 'shop' }).waitFor();
    expect(await page.getByLabel('Automation reported (webdriver)').isChecked()).toBe(false);
    expect(await page.locator('.result').count()).toBe(0);
  });

  it('shows an overview across apps, with names and links', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const row = page.getByRole('row', { name: /^store/ });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    // Three solved challenges, three passes; refused: the replay and the probes of the test above.
    expect(cells.slice(0, 5)).toEqual(['disabled', '3', '0', '100 %', '3']);
    expect(Number(cells[5])).toBeGreaterThanOrEqual(1);
    expect(await page.locator('.tiles').textContent()).toMatch(/Challenges\s*3.*Validations passed\s*3/);
    await checkView('overview', 'overview');
  });

  it('switches between the system theme, light and dark, and remembers the choice', async () => {
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByLabel('Theme').selectOption('dark');
    expect(await background()).toBe('rgb(21, 24, 28)');
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await background()).toBe('rgb(21, 24, 28)');
    expect(await page.getByLabel('Theme').inputValue()).toBe('dark');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByLabel('Theme').selectOption('light');
    expect(await background()).toBe('rgb(255, 255, 255)');
    await page.getByLabel('Theme').selectOption('auto');
    expect(await background()).toBe('rgb(21, 24, 28)');
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('shows an app declared by a custom resource read-only, with its CR name', async () => {
    const apps = (await (await fetch(`${api.url}/admin/v1/apps`, { headers: admin() })).json()) as {
      data: { apps: { app_key: string; managed_by: unknown }[] };
    };
    const managed = apps.data.apps.find((a) => a.managed_by !== null)!;
    await page.goto(`${api.url}/console#/apps/${managed.app_key}`);
    await page.getByRole('note').filter({ hasText: 'App payments/checkout' }).waitFor();
    expect(await page.getByLabel('Plan').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rotate secret' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rotate key' }).count()).toBe(0);
    await checkView('managed app', 'managed-app');
  });

  it('lists recent risk decisions and the standby hosts (unknown when unreachable)', async () => {
    await page.getByRole('link', { name: 'Risk decisions' }).click();
    await page.getByRole('heading', { name: 'Recent risk decisions' }).waitFor();
    await page.locator('tbody tr').first().waitFor();
    // Apps by name (a link to the app), also for decisions taken under a key since rotated.
    expect(await page.locator('tbody tr td:nth-child(2)').allTextContents()).toContain('store');
    expect(await page.locator('tbody tr td:nth-child(2) code').count()).toBe(0);
    await checkView('decisions', 'decisions');
    await page.getByRole('link', { name: 'Standby' }).click();
    const row = page.getByRole('row', { name: /127\.0\.0\.1:9/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('unknown (unreachable)');
    await checkView('standby', 'standby');
  });

  it('renders the API reference at /docs from the served OpenAPI document', async () => {
    await page.goto(`${api.url}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('.opblock-summary-path').allTextContents()).toEqual(
      expect.arrayContaining(['/v1/validate', '/admin/v1/apps']),
    );
    // Grouped by tag, in the document's order, none left in "default".
    expect(
      await page.locator('h3.opblock-tag').evaluateAll((hs) => hs.map((h) => h.getAttribute('data-tag'))),
    ).toEqual([
      'Integration',
      'Siteverify',
      'Challenge',
      'Widget',
      'Standby',
      'Apps',
      'Console',
      'Standby keys',
      'Operations',
    ]);
    const validate = page.locator('#operations-Integration-post_v1_validate');
    expect(await validate.count()).toBe(1);
    await expectAccessible('API reference');
    await validate.locator('.opblock-summary-control').click();
    await validate.locator('.opblock-body').waitFor();
    await expectAccessible('API reference, an operation open');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png'), fullPage: true });
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'console-docs.png'), fullPage: true });
  });

  it('ends the session when idle: the next action asks to sign in again', async () => {
    await page.goto(`${api.url}/console#/apps`);
    // The list, not just its heading: a request still in flight when the clock moves would end the
    // session before the click this test makes.
    await page.getByRole('table', { name: 'Apps' }).waitFor();
    clockAhead += 31 * 60_000;
    await page.getByRole('link', { name: 'Risk decisions' }).click();
    await page.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
    await page.getByLabel('Admin token').fill(api.runtime.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Recent risk decisions' }).waitFor();
  });

  it('signs out for good: the cookie the browser held is refused afterwards, on a reload too', async () => {
    const [held] = await page.context().cookies();
    expect(held?.name).toBe('gatehouse_console');
    const replay = () =>
      fetch(`${api.url}/admin/v1/apps`, { headers: { cookie: `${held!.name}=${held!.value}` } });
    expect((await replay()).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.context().cookies()).toEqual([]);
    expect((await replay()).status).toBe(401);
    await page.reload();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.getByRole('heading', { name: 'Apps' }).count()).toBe(0);
  });

  it("never violated the pages' Content-Security-Policy", () => {
    expect(violations).toEqual([]);
  });
});

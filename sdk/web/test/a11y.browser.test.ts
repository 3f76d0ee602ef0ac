import { databaseAvailable } from '@gatehouse/api/testing';
import { freePort } from '@gatehouse/api/testing/processes';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { AppSettingsInput } from '../../../api/src/apps/settings.ts';
import { openChallenge } from '../../../api/src/challenges/sealed-challenge.ts';
import { expectAccessible, landmarkPage, recordSaid, saidSoFar, THEMES, type Theme, tabTo } from './a11y.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';
import {
  dragInstantly,
  events,
  focusedClass,
  outcome,
  type PageRenderOptions,
  press,
  render,
} from './helpers.ts';

/*
 * WCAG 2.2 AA for the widget in every state it can be in, in Debian's Chromium against a real API: each
 * challenge kind (the invisible tier, slide, click, select; inline and in the popup dialog), a wrong
 * answer, the error, expired and unverified states, in the light and the dark theme, checked by axe-core
 * (which looks into the widget's open shadow roots). Then what a keyboard or screen-reader user meets, one
 * test each: where focus goes, what the live region says, Escape in the popup, the prompts.
 */
const run = chromiumAvailable() && (await databaseAvailable());
// The API runs in this process: short proofs-of-work keep the keyboard and alternative tests quick (their
// production prices are checked in api/test/accessible-alternative.test.ts).
process.env.KEYBOARD_POW_SECONDS = '0.5';
process.env.ALTERNATIVE_POW_SECONDS = '4';

const imageOnly = (kind: 'slide' | 'click' | 'select') => ({
  invisible_below: 0,
  image_below: 101,
  image_kinds: [kind],
});

describe.runIf(run)('widget accessibility in Chromium', () => {
  const suite = widgetBrowserSuite('gatehouse-a11y-');
  const { newPage } = suite;

  const app = (settings: Partial<AppSettingsInput>) =>
    suite.api.createApp({ name: 'a11y-test', ...settings });

  /** Opens the page in `theme` and renders a widget with `options`; `before` runs before rendering. */
  async function widgetPage(
    theme: Theme,
    options: PageRenderOptions & Record<string, unknown>,
    before: (page: Page) => Promise<void> = async () => {},
  ): Promise<Page> {
    await suite.closeContext();
    const page = await newPage({ colorScheme: theme });
    await page.goto(suite.site.page(`/a-${Math.random().toString(36).slice(2)}.html`, landmarkPage(theme)));
    await before(page);
    // Listened for before the widget renders: it may ask for its challenge before render() returns, and a
    // listener added after that waits for a response already gone (a 60 s timeout once the init got fast).
    const init = page
      .waitForResponse((r) => r.url().endsWith('/v1/challenge/init'), { timeout: 60_000 })
      .then((r) => r.json() as Promise<InitBody>);
    init.catch(() => {}); // pages that never ask for a challenge close with it pending: not an error
    firstInits.set(page, init);
    await render(page, { apiServer: suite.api.url, theme, ...options });
    return page;
  }
  /** What the tests read of an init's answer. */
  type InitBody = { data: { challenge: string; expires_in: number } };
  const firstInits = new WeakMap<Page, Promise<InitBody>>();

  /** Text of the first element matching `selector` inside the widget's shadow roots. */
  const text = (page: Page, selector: string) => page.locator(selector).first().textContent();

  /** The slide's answer, from the sealed challenge of the first init (test-only knowledge). */
  async function slideAnswer(page: Page, appId: string, init: Promise<InitBody>) {
    const sealed = openChallenge(suite.api.runtime.keys, appId, (await init).data.challenge);
    if (!sealed?.img) throw new Error('no image challenge');
    await page.locator('.handle').waitFor({ state: 'visible' });
    return (sealed.img.answer as { x: number }).x;
  }
  /** The body of the first challenge init the widget on `page` made (listened for since before it rendered). */
  const firstInit = (page: Page) => firstInits.get(page)!;

  for (const theme of THEMES) {
    it(`${theme}: the invisible tier (done), each image kind inline, the slide in the popup dialog, a wrong answer`, async () => {
      const invisible = await app({ test_mode: true });
      let page = await widgetPage(theme, { appKey: invisible.appKey, mode: 'embedded' });
      expect(await outcome(page)).toMatchObject({ type: 'success' });
      await expectAccessible(page, `${theme} invisible tier, done`);

      for (const kind of ['slide', 'click', 'select'] as const) {
        const a = await app({ risk_policy: imageOnly(kind) });
        page = await widgetPage(theme, { appKey: a.appKey, mode: 'embedded' });
        await page.locator('.stage').waitFor({ state: 'visible' });
        await expectAccessible(page, `${theme} ${kind} inline`);
      }

      const a = await app({ risk_policy: imageOnly('slide') });
      page = await widgetPage(theme, { appKey: a.appKey, mode: 'popup' });
      const init = firstInit(page);
      await page.locator('.check').click();
      await page.locator('dialog .handle').waitFor({ state: 'visible' });
      await expectAccessible(page, `${theme} slide in the popup dialog`);

      // A wrong answer: one answer per picture (docs/challenges.md), so a fresh one, said plainly (the
      // message in the error colour and the piece back at the start).
      const x = await slideAnswer(page, a.appId, init);
      const stage = await page.locator('.stage').boundingBox();
      await dragInstantly(page, page.locator('.handle'), x, (stage?.width ?? 300) / 300);
      await expect
        .poll(() => text(page, '.msg'), { timeout: 20_000 })
        .toMatch(/attempt|Here is a new challenge|not right/);
      await expectAccessible(page, `${theme} slide after a wrong answer`);
    }, 180_000);

    it(`${theme}: the error, expired and unverified states`, async () => {
      const needsToken = await app({ server_token_required: true, test_mode: true });
      let page = await widgetPage(theme, { appKey: needsToken.appKey, mode: 'embedded' });
      expect(await outcome(page)).toMatchObject({ type: 'error', code: 'server_token_required' });
      expect(await page.locator('.box').getAttribute('data-state')).toBe('error');
      await expectAccessible(page, `${theme} error`);

      const short = await app({ test_mode: true, pass_token_ttl: 30 });
      page = await widgetPage(
        theme,
        { appKey: short.appKey, mode: 'embedded', refreshExpired: 'never' },
        (p) => p.clock.install(),
      );
      expect(await outcome(page)).toMatchObject({ type: 'success' });
      await page.clock.fastForward('00:26');
      await expect.poll(() => page.locator('.box').getAttribute('data-state')).toBe('expired');
      await expectAccessible(page, `${theme} expired`);

      const dead = `http://127.0.0.1:${await freePort()}`;
      page = await widgetPage(theme, {
        appKey: 'ak_any',
        mode: 'embedded',
        apiServer: dead,
        bypassServers: `http://127.0.0.1:${await freePort()}`,
      });
      expect(await outcome(page)).toMatchObject({ type: 'unverified' });
      await expect.poll(() => page.locator('.box').getAttribute('data-state')).toBe('unverified');
      await expectAccessible(page, `${theme} unverified`);
    }, 120_000);
  }

  it('a keyboard success inline gives focus back to the box (not to <body>)', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const page = await widgetPage('light', { appKey: a.appKey, mode: 'embedded' });
    const init = firstInit(page);
    const x = await slideAnswer(page, a.appId, init);
    await page.locator('input[name="user"]').focus();
    await press(page, 'Tab');
    expect(await focusedClass(page)).toBe('button.check');
    await press(page, 'Tab');
    expect(await focusedClass(page)).toBe('div.handle');
    for (let i = 0; i < Math.floor(x / 20); i++) await press(page, 'Shift+ArrowRight');
    for (let i = 0; i < Math.round((x % 20) / 4); i++) await press(page, 'ArrowRight');
    await press(page, 'Enter');
    expect(await outcome(page)).toMatchObject({ type: 'success' });
    await expect.poll(() => page.locator('.panel').count()).toBe(0);
    expect(await focusedClass(page)).toBe('button.check');
  }, 90_000);

  it('the accessible alternative, by keyboard only from each image kind: focus on its status, progress said in the live region, axe-clean, a pass token that says so, focus back to the box', async () => {
    for (const kind of ['slide', 'click', 'select'] as const) {
      const a = await app({ risk_policy: imageOnly(kind) });
      const page = await widgetPage('light', { appKey: a.appKey, mode: 'embedded' });
      await page.locator('.stage').waitFor({ state: 'visible' });
      // Tab from the page's field through the box and the challenge to the link, keys only.
      await page.locator('input[name="user"]').focus();
      const reached: string[] = [];
      for (let i = 0; i < 40 && (await focusedClass(page)) !== 'button.link'; i++) {
        await press(page, 'Tab');
        reached.push(await focusedClass(page));
      }
      expect(await focusedClass(page), `${kind}: ${reached.join(' → ')}`).toBe('button.link');
      // Its name says what it is for, in the page's language.
      expect(await page.locator('button.link').textContent()).toMatch(/can't see the puzzle/i);
      await recordSaid(page);
      await press(page, 'Enter');
      // Focus moves to the status a screen reader reads, beside a named progressbar.
      await expect.poll(() => focusedClass(page), { timeout: 10_000 }).toBe('p.alt-status');
      await page.locator('[role=progressbar]').waitFor({ state: 'visible' });
      expect(await page.locator('#gh-prompt').textContent()).toBe('Verifying without the puzzle');
      await expectAccessible(page, `${kind} alternative in progress`);
      // Progress is said in the live region (a quarter at a time), then the widget succeeds.
      const result = await outcome(page, 120_000);
      expect(result, kind).toMatchObject({ type: 'success' });
      const said = await page.evaluate(() => (window as unknown as { said: string[] }).said);
      expect(
        said.some((m) => /^\d+ % done$/.test(m)),
        `${kind}: ${said.join(' / ')}`,
      ).toBe(true);
      const token = (result as { token: string }).token;
      const verdict = await suite.api.post(
        '/v1/validate',
        { pass_token: token },
        { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret },
      );
      expect(verdict.body.data.risk.reasons).toContain('challenge.alternative');
      await expect.poll(() => page.locator('.panel').count()).toBe(0);
      expect(await focusedClass(page)).toBe('button.check');
      await expectAccessible(page, `${kind} alternative, done`);
    }
  }, 240_000);

  for (const theme of THEMES) {
    it(`${theme}: back to the puzzle from the alternative, by keyboard: focus on the challenge, its prompt said, axe-clean; the alternative resumes where it was (one ticket) and passes`, async () => {
      // The fourth and fifth alternatives of this address in this file: cheap, or their doubling takes minutes.
      const base = process.env.ALTERNATIVE_POW_SECONDS;
      process.env.ALTERNATIVE_POW_SECONDS = '1';
      try {
        const a = await app({ risk_policy: imageOnly('slide') });
        const asked: string[] = [];
        const page = await widgetPage(theme, { appKey: a.appKey, mode: 'embedded' }, async (p) => {
          p.on('request', (r) => {
            if (r.url().endsWith('/v1/challenge/alternative')) asked.push(r.url());
          });
        });
        await page.locator('.handle').waitFor({ state: 'visible' });
        await page.locator('input[name="user"]').focus();
        await tabTo(page, 'button.link');
        await recordSaid(page);
        await press(page, 'Enter');
        await expect.poll(() => focusedClass(page), { timeout: 10_000 }).toBe('p.alt-status');
        // The way back is the next stop of the Tab order, named for what it does.
        await press(page, 'Tab');
        expect(await focusedClass(page)).toBe('button.link');
        expect(await page.locator('button.link').textContent()).toBe('Back to the puzzle');
        await expectAccessible(page, `${theme} alternative with its way back`);
        await press(page, 'Enter');
        // The same challenge again, focus on its piece, its prompt said.
        await expect.poll(() => focusedClass(page)).toBe('div.handle');
        expect(await text(page, '.prompt')).toMatch(/shape/);
        await expect
          .poll(() => saidSoFar(page).then((s) => s.at(-1)))
          .toBe('Drag the piece into the gap that matches its shape');
        expect(await page.locator('[role=progressbar]').count()).toBe(0);
        await expectAccessible(page, `${theme} back at the puzzle`);
        // And to the alternative again: it goes on with the same ticket, then passes.
        await tabTo(page, 'button.link');
        expect(await page.locator('button.link').textContent()).toMatch(/can't see the puzzle/i);
        await press(page, 'Enter');
        await expect.poll(() => focusedClass(page), { timeout: 10_000 }).toBe('p.alt-status');
        const result = await outcome(page, 120_000);
        expect(result).toMatchObject({ type: 'success' });
        expect(asked).toHaveLength(1);
        const verdict = await suite.api.post(
          '/v1/validate',
          { pass_token: (result as { token: string }).token },
          { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret },
        );
        expect(verdict.body.data.risk.reasons).toContain('challenge.alternative');
        await expect.poll(() => page.locator('.panel').count()).toBe(0);
        expect(await focusedClass(page)).toBe('button.check');
      } finally {
        process.env.ALTERNATIVE_POW_SECONDS = base;
      }
    }, 120_000);
  }

  it('an Escape pressed while a timed-out challenge reloads closes the popup, though the first promise has settled', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    let held: (() => void) | undefined;
    let inits = 0;
    const page = await widgetPage('light', { appKey: a.appKey, mode: 'popup' }, async (p) => {
      await p.clock.install();
      // The second init (the replacement) is held until the Escape has been pressed.
      await p.route('**/v1/challenge/init', async (route) => {
        if (++inits === 2) await new Promise<void>((release) => (held = release));
        await route.continue();
      });
    });
    const init = firstInit(page);
    await page.locator('.check').click();
    const expiresIn = (await init).data.expires_in as number;
    await page.locator('dialog .handle').waitFor({ state: 'visible' });
    await page.locator('dialog .handle').focus();
    await page.clock.fastForward((expiresIn + 1) * 1000);
    await expect.poll(() => inits, { timeout: 10_000 }).toBe(2);
    // The old challenge is still shown and focused while its replacement loads.
    expect(await focusedClass(page)).toBe('div.handle');
    await press(page, 'Escape');
    held?.();
    await expect
      .poll(() => events(page).then((e) => e.map((x) => x.type)), { timeout: 10_000 })
      .toContain('close');
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect(await page.locator('.box').getAttribute('data-state')).toBe('idle');
    // Closed means closed: the replacement that arrived afterwards is not shown.
    await page.waitForTimeout(500);
    expect(await page.locator('dialog').count()).toBe(0);
    expect(await focusedClass(page)).toBe('button.check');
  }, 90_000);

  it('once the challenge is shown, the live region no longer says "Loading the challenge…"', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    for (const mode of ['embedded', 'popup'] as const) {
      const page = await widgetPage('light', { appKey: a.appKey, mode });
      if (mode === 'popup') await page.locator('.check').click();
      await page.locator('.handle').waitFor({ state: 'visible' });
      // Give a late announcement the time to land.
      await page.waitForTimeout(300);
      expect(await text(page, '.sr[role="status"]'), mode).not.toBe('Loading the challenge…');
    }
  }, 90_000);

  it('while the challenge waits for the user, the box does not say "Verifying…" (nor spin)', async () => {
    const a = await app({ risk_policy: imageOnly('select') });
    const page = await widgetPage('light', { appKey: a.appKey, mode: 'embedded' });
    await page.locator('.tile').first().waitFor({ state: 'visible' });
    await page.waitForTimeout(300);
    expect(await text(page, '.status')).not.toBe('Verifying…');
    expect(await page.locator('.check').textContent()).not.toContain('Verifying');
    const spinning = await page
      .locator('.check .icon')
      .evaluate((icon) => getComputedStyle(icon).animationName !== 'none');
    expect(spinning).toBe(false);
  }, 90_000);

  it('the slide prompt says to match the shape (the other gap is a decoy)', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const page = await widgetPage('light', { appKey: a.appKey, mode: 'embedded' });
    await page.locator('.handle').waitFor({ state: 'visible' });
    expect(await text(page, '.prompt')).toMatch(/shape/);
  }, 90_000);

  for (const [lang, label] of [
    ['ar', 'أنا إنسان'],
    ['he', 'אני אנושי'],
  ] as const) {
    it(`${lang}: right to left (dir=rtl, mirrored box), the slide still left to right, no truncated text, accessible`, async () => {
      const a = await app({ risk_policy: imageOnly('slide') });
      const page = await widgetPage('light', { appKey: a.appKey, mode: 'embedded', lang });
      await page.locator('.handle').waitFor({ state: 'visible' });
      // The language pack arrives on its own: then the box speaks the language.
      await expect.poll(() => text(page, '.check'), { timeout: 10_000 }).toContain(label);
      const layout = await page.evaluate(() => {
        const host = document.querySelector<HTMLElement>('#captcha > div');
        const root = host?.shadowRoot;
        const ui = root?.querySelector<HTMLElement>('.slot > div');
        const inner = ui?.shadowRoot;
        const x = (el: Element | null | undefined) => el?.getBoundingClientRect().left ?? Number.NaN;
        // Text that does not fit its box is cut: scrollWidth beyond clientWidth.
        const cut = [
          ...Array.from(root?.querySelectorAll<HTMLElement>('.txt span') ?? []),
          ...Array.from(inner?.querySelectorAll<HTMLElement>('.prompt, .msg, .btn') ?? []),
        ]
          .filter((el) => el.scrollWidth > el.clientWidth + 1)
          .map((el) => el.className || el.tagName);
        return {
          hostDir: host?.dir,
          uiDir: ui?.dir,
          slideDir: inner?.querySelector<HTMLElement>('.slide')?.dir,
          // Mirrored: the checkbox icon on the right of the brand.
          iconRightOfBrand: x(root?.querySelector('.icon')) > x(root?.querySelector('.brand')),
          prompt: inner?.querySelector('.prompt')?.textContent,
          cut,
        };
      });
      expect(layout).toMatchObject({
        hostDir: 'rtl',
        uiDir: 'rtl',
        slideDir: 'ltr',
        iconRightOfBrand: true,
        cut: [],
      });
      expect(layout.prompt).toMatch(lang === 'ar' ? /[\u0600-\u06ff]/ : /[\u0590-\u05ff]/);
      // The keyboard still moves the piece the way the picture goes: ArrowRight is to the right.
      await page.locator('.handle').focus();
      await press(page, 'ArrowRight');
      expect(Number(await page.locator('.handle').getAttribute('aria-valuenow'))).toBeGreaterThan(0);
      await expectAccessible(page, `${lang} slide`);
    }, 90_000);
  }
});

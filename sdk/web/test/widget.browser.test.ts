import { databaseAvailable } from '@gatehouse/api/testing';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { AppSettingsInput } from '../../../api/src/apps/settings.ts';
import { openChallenge } from '../../../api/src/challenges/sealed-challenge.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';
import {
  dragInstantly,
  dragLikeAHuman,
  events,
  finger,
  focusedClass,
  outcome,
  type PageRenderOptions,
  press,
  render,
} from './helpers.ts';
import { formPage } from './page-server.ts';

/*
 * The widget in Debian's Chromium against a real API: the built gatehouse.js on an integrator's page (its
 * own origin), talking to the API on another origin (CORS) or through the page's origin (default
 * apiServer). The slide answers come from opening the sealed challenge with the API's keys: test-only
 * knowledge standing in for a person's eyes.
 */
const run = chromiumAvailable() && (await databaseAvailable());

const INVISIBLE = { invisible_below: 101, image_below: 101 };
const imageOnly = (kind: 'slide' | 'click' | 'select') => ({
  invisible_below: 0,
  image_below: 101,
  image_kinds: [kind],
});

describe.runIf(run)('web widget in Chromium', () => {
  const secrets = new Map<string, string>();
  const suite = widgetBrowserSuite('gatehouse-widget-', secrets);
  const { newPage } = suite;

  async function app(settings: Partial<AppSettingsInput>) {
    const created = await suite.api.createApp({ name: 'widget-test', ...settings });
    secrets.set(created.appKey, created.appSecret);
    return created;
  }
  const auth = (a: { appKey: string; appSecret: string }) => ({
    'X-App-Key': a.appKey,
    'X-App-Secret': a.appSecret,
  });

  async function open(path: string, html: string, hasTouch = false): Promise<Page> {
    const page = await newPage({ hasTouch });
    await page.goto(suite.site.page(path, html));
    return page;
  }

  /** A form page with a #captcha container, rendered with `options`; resolves the first init answer. */
  async function widgetPage(
    options: PageRenderOptions,
    start: (page: Page) => Promise<void> = async () => {},
    hasTouch = false,
  ) {
    const page = await open(
      `/p-${Math.random().toString(36).slice(2)}.html`,
      formPage('<div id="captcha"></div>'),
      hasTouch,
    );
    // The body is read as soon as the answer comes: a page that submits its form right after verifying
    // (button mode) navigates away, and Chromium then no longer holds the answer's body.
    const init = page
      .waitForResponse((r) => r.url().endsWith('/v1/challenge/init'), { timeout: 60_000 })
      .then((r) => r.json());
    await render(page, { apiServer: suite.api.url, ...options });
    await start(page);
    const body = await init;
    return { page, init: body.data };
  }

  /** The image answer sealed in an init answer. */
  function sealedAnswer<T>(appId: string, init: { challenge: string }): T {
    const sealed = openChallenge(suite.api.runtime.keys, appId, init.challenge);
    if (!sealed?.img) throw new Error('no image challenge in this init answer');
    return sealed.img.answer as T;
  }

  /** Slide geometry on screen: the handle, and CSS px per background px. */
  async function slideHandle(page: Page) {
    const handle = page.locator('.handle');
    await handle.waitFor({ state: 'visible' });
    const stage = await page.locator('.stage').boundingBox();
    return { handle, scale: (stage?.width ?? 300) / 300 };
  }

  async function expectValid(token: string, a: { appKey: string; appSecret: string }) {
    const verdict = await suite.api.post('/v1/validate', { pass_token: token }, auth(a));
    expect(verdict.body.data).toMatchObject({ valid: true, action: 'login' });
    return verdict.body.data;
  }

  it('invisible path: auto-rendered from data attributes with the default apiServer, solves the proof-of-work in a worker and fills the form field', async () => {
    const a = await app({ risk_policy: INVISIBLE });
    const page = await open(
      '/invisible.html',
      formPage(
        `<div id="captcha" data-gatehouse-app-key="${a.appKey}" data-gatehouse-action="login" data-gatehouse-mode="invisible" data-gatehouse-callback="onToken"></div>
<script>window.events = []; window.onToken = (token) => window.events.push({ type: 'success', token });</script>`,
      ),
    );
    const result = await outcome(page, 170_000);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    expect(await page.locator('dialog').count()).toBe(0);
    // The integrator's backend receives the token in the form and validates it.
    await page.click('#go');
    const posted = JSON.parse((await page.locator('#posted').textContent()) ?? '{}');
    expect(posted['gatehouse-token']).toBe((result as { token: string }).token);
    const verdict = await expectValid(posted['gatehouse-token'], a);
    expect(verdict.captcha_args).toMatchObject({
      platform: 'web',
      referer: expect.stringContaining('/invisible.html'),
    });
  }, 180_000);

  it('slide: a human-like drag passes and yields a pt_ token that /v1/validate accepts', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'popup' }, (p) =>
      p.locator('.check').click(),
    );
    expect(init.tier).toBe('image');
    const { handle, scale } = await slideHandle(page);
    await dragLikeAHuman(page, handle, sealedAnswer<{ x: number }>(a.appId, init).x, scale);
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
    expect(await page.locator('.check').getAttribute('aria-checked')).toBe('true');
    expect(await page.locator('input[name="gatehouse-token"]').inputValue()).toBe(
      (result as { token: string }).token,
    );
    // Screen readers hear the outcome from the box's live region.
    expect(await page.locator('.sr[role="status"]').textContent()).toBe('Verified');
  }, 90_000);

  it('slide by touch: a finger drag on a touch screen passes', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'embedded' }, async () => {}, true);
    const { handle, scale } = await slideHandle(page);
    const submitted = page.waitForRequest((r) => r.url().endsWith('/v1/challenge/submit'));
    const target = sealedAnswer<{ x: number }>(a.appId, init).x;
    await dragLikeAHuman(page, handle, target, scale, 5, await finger(page));
    expect((await submitted).postDataJSON().answer.input).toBe('touch');
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
  }, 90_000);

  it('slide: an instant straight-line drag fails with invalid_answer; a new picture comes, which a person solves', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'embedded' });
    const answer = sealedAnswer<{ x: number }>(a.appId, init);
    const { handle, scale } = await slideHandle(page);
    const refused = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/submit'));
    const next = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/init'));
    await dragInstantly(page, handle, answer.x, scale);
    const submitted = await refused;
    expect(submitted.status()).toBe(422);
    expect(await submitted.json()).toMatchObject({
      error: 'invalid_answer',
      message: expect.stringMatching(/no attempts left/),
    });
    // One answer per picture (MAX_ATTEMPTS): the widget fetches a new challenge instead of a second try.
    const again = (await (await next).json()).data;
    expect(again.challenge_id).not.toBe(init.challenge_id);
    // The person is told the answer was wrong, in the live region, with the new picture to try again on.
    await expect
      .poll(() => page.locator('.msg').textContent())
      .toBe('That answer was not right. Try again with this new one.');
    expect(await page.locator('.msg').getAttribute('aria-live')).toBe('polite');
    expect(await events(page)).not.toContainEqual(expect.objectContaining({ type: 'error' }));
    await expect.poll(() => handle.getAttribute('aria-valuenow')).toBe('0');
    await dragLikeAHuman(page, handle, sealedAnswer<{ x: number }>(a.appId, again).x, scale, 11);
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
  }, 90_000);

  it('keyboard only: Tab to the widget, Space opens the slide, arrows move the piece, Enter submits; focus returns', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'popup' }, async (p) => {
      await p.locator('input[name="user"]').focus();
      await press(p, 'Tab');
      expect(await focusedClass(p)).toBe('button.check');
      await press(p, 'Space');
    });
    await page.locator('.handle').waitFor({ state: 'visible' });
    expect(await focusedClass(page)).toBe('div.handle');
    const target = sealedAnswer<{ x: number }>(a.appId, init).x;
    for (let i = 0; i < Math.floor(target / 20); i++) await press(page, 'Shift+ArrowRight');
    for (let i = 0; i < Math.round((target % 20) / 4); i++) await press(page, 'ArrowRight');
    await press(page, 'Enter');
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect(await focusedClass(page)).toBe('button.check');
  }, 90_000);

  it('keyboard only: select tiles with arrows and Space, Tab to Verify, Enter', async () => {
    const a = await app({ risk_policy: imageOnly('select') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'popup' }, async (p) => {
      await p.locator('input[name="user"]').focus();
      await press(p, 'Tab');
      await press(p, 'Enter');
    });
    const tiles = page.locator('.tile');
    await tiles.first().waitFor({ state: 'visible' });
    expect(await focusedClass(page)).toBe('button.tile');
    const wanted = sealedAnswer<{ indices: number[] }>(a.appId, init).indices;
    for (let i = 0; i < 9; i++) {
      if (wanted.includes(i)) await press(page, 'Space');
      if (i < 8) await press(page, 'ArrowRight');
    }
    for (const i of wanted) expect(await tiles.nth(i).getAttribute('aria-pressed')).toBe('true');
    await press(page, 'Tab'); // the new-challenge button
    await press(page, 'Tab'); // Verify
    await press(page, 'Enter');
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
  }, 90_000);

  it('keyboard only: the click crosshair by arrows, Enter at each symbol, Verify; the answer carries the keyboard proof', async () => {
    const a = await app({ risk_policy: imageOnly('click') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'embedded' });
    const stage = page.locator('.click .stage');
    await stage.waitFor({ state: 'visible' });
    await stage.focus();
    // The crosshair starts at the centre and moves 5 px (Shift: 25 px) per press, as the view says.
    const { step, largeStep } = init.image.view.keyboard as { step: number; largeStep: number };
    const at = { x: init.image.view.image.width / 2, y: init.image.view.image.height / 2 };
    const go = async (axis: 'x' | 'y', to: number) => {
      const [less, more] = axis === 'x' ? ['ArrowLeft', 'ArrowRight'] : ['ArrowUp', 'ArrowDown'];
      while (Math.abs(to - at[axis]) >= largeStep) {
        const d = Math.sign(to - at[axis]);
        await press(page, `Shift+${d > 0 ? more : less}`);
        at[axis] += d * largeStep;
      }
      while (Math.abs(to - at[axis]) > step / 2) {
        const d = Math.sign(to - at[axis]);
        await press(page, d > 0 ? (more as string) : (less as string));
        at[axis] += d * step;
      }
    };
    await page.waitForTimeout(600);
    for (const t of sealedAnswer<{ targets: Array<{ x: number; y: number }> }>(a.appId, init).targets) {
      await go('x', t.x);
      await go('y', t.y);
      await page.waitForTimeout(200);
      await press(page, 'Enter');
    }
    const submitted = page.waitForRequest((r) => r.url().endsWith('/v1/challenge/submit'));
    await page.getByRole('button', { name: 'Verify' }).click();
    const sent = (await submitted).postDataJSON().answer;
    expect(sent).toMatchObject({ input: 'keyboard', picks: expect.any(Array), pow: expect.anything() });
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    const verdict = await suite.api.post(
      '/v1/validate',
      { pass_token: (result as { token: string }).token },
      auth(a),
    );
    expect(verdict.body.data.risk.reasons).toContain('challenge.keyboard');
  }, 90_000);

  it('click: the symbols clicked in order pass; the prompt follows the lang option', async () => {
    const a = await app({ risk_policy: imageOnly('click') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'embedded', lang: 'fr' });
    const stage = page.locator('.stage');
    await stage.waitFor({ state: 'visible' });
    expect(await page.locator('.prompt').textContent()).toMatch(/^Cliquez sur ces \d symboles/);
    const box = await stage.boundingBox();
    const scale = (box?.width ?? 300) / 300;
    await page.waitForTimeout(700);
    for (const t of sealedAnswer<{ targets: Array<{ x: number; y: number }> }>(a.appId, init).targets) {
      await page.mouse.click((box?.x ?? 0) + t.x * scale, (box?.y ?? 0) + t.y * scale);
      await page.waitForTimeout(250);
    }
    await page.getByRole('button', { name: 'Valider' }).click();
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
  }, 90_000);

  it("button mode: clicking the form's button verifies first, then submits the form with the token", async () => {
    const a = await app({ test_mode: true });
    const { page } = await widgetPage({ appKey: a.appKey, mode: 'button', button: '#go' }, (p) =>
      p.click('#go'),
    );
    await page.locator('#posted').waitFor({ timeout: 60_000 });
    const posted = JSON.parse((await page.locator('#posted').textContent()) ?? '{}');
    expect(posted.user).toBe('alice');
    expect(posted['gatehouse-token']).toMatch(/^pt_/);
    await expectValid(posted['gatehouse-token'], a);
  }, 90_000);

  it('hard tier: the proof-of-work runs while the user solves the image, and both go in one submission', async () => {
    const a = await app({
      risk_policy: { invisible_below: 0, image_below: 0, high: 'hard', image_kinds: ['select'] },
    });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'popup' }, (p) =>
      p.locator('.check').click(),
    );
    expect(init.tier).toBe('hard');
    expect(init.pow).toBeDefined();
    const tiles = page.locator('.tile');
    await tiles.first().waitFor({ state: 'visible' });
    for (const i of sealedAnswer<{ indices: number[] }>(a.appId, init).indices) await tiles.nth(i).click();
    const submitted = page.waitForRequest((r) => r.url().endsWith('/v1/challenge/submit'), {
      timeout: 170_000,
    });
    await page.getByRole('button', { name: 'Verify' }).click();
    const body = (await submitted).postDataJSON();
    expect(body.pow.nonces).toHaveLength(init.pow.count);
    const result = await outcome(page, 170_000);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
  }, 180_000);

  it('an expired token is cleared from the form and an embedded widget verifies again by itself', async () => {
    const a = await app({ test_mode: true, pass_token_ttl: 30 });
    const { page } = await widgetPage({ appKey: a.appKey, mode: 'embedded' }, (p) => p.clock.install());
    const first = await outcome(page);
    expect(first).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    const field = page.locator('input[name="gatehouse-token"]');
    expect(await field.inputValue()).toBe((first as { token: string }).token);
    await page.clock.fastForward('00:26');
    await page.waitForFunction(
      () =>
        (window as unknown as { events: Array<{ type: string }> }).events.filter((e) => e.type === 'success')
          .length === 2,
    );
    const second = (await events(page)).filter((e) => e.type === 'success')[1] as { token: string };
    expect(second.token).not.toBe((first as { token: string }).token);
    expect(await field.inputValue()).toBe(second.token);
  }, 90_000);

  it('Escape closes the popup, calls onClose (not onError) and gives focus back', async () => {
    const a = await app({ risk_policy: imageOnly('slide') });
    const { page } = await widgetPage({ appKey: a.appKey, mode: 'popup' }, async (p) => {
      await p.locator('input[name="user"]').focus();
      await press(p, 'Tab');
      await press(p, 'Enter');
    });
    await page.locator('.handle').waitFor({ state: 'visible' });
    await press(page, 'Escape');
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect((await events(page)).map((e) => e.type)).toEqual(['ready', 'close']);
    expect(await focusedClass(page)).toBe('button.check');
    expect(await page.locator('.check').getAttribute('aria-checked')).toBe('false');
  }, 90_000);

  it('degraded: with the quota exhausted the widget completes at once with a dg_ token, no challenge and no error', async () => {
    const a = await app({ monthly_quota: 0, risk_policy: imageOnly('slide') });
    const { page, init } = await widgetPage({ appKey: a.appKey, mode: 'embedded' });
    expect(init.mode).toBe('degraded');
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^dg_/) });
    expect(await page.locator('.panel').count()).toBe(0);
    expect(await page.locator('.box').getAttribute('data-state')).toBe('done');
    expect(await page.locator('input[name="gatehouse-token"]').inputValue()).toMatch(/^dg_/);
    const verdict = await suite.api.post(
      '/v1/validate',
      { pass_token: (result as { token: string }).token },
      auth(a),
    );
    expect(verdict.body.data).toMatchObject({ valid: false, degraded: true });
  }, 60_000);

  it('server token required: without one onError gets server_token_required; with getServerToken it passes', async () => {
    const a = await app({ server_token_required: true, test_mode: true });
    const without = await widgetPage({ appKey: a.appKey, mode: 'invisible' });
    expect(await outcome(without.page)).toMatchObject({ type: 'error', code: 'server_token_required' });
    await suite.closeContext();

    const withToken = await widgetPage({ appKey: a.appKey, mode: 'invisible', withGetServerToken: true });
    expect(withToken.init.mode).toBe('challenge');
    const result = await outcome(withToken.page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    await expectValid((result as { token: string }).token, a);
  }, 90_000);
});

import { databaseAvailable } from '@gatehouse/api/testing';
import type { Page, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openChallenge } from '../../../api/src/challenges/sealed-challenge.ts';
import { expectAccessible, landmarkPage, recordSaid, saidSoFar, THEMES, type Theme } from './a11y.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';
import { focusedClass, outcome, press, render } from './helpers.ts';

/*
 * Keyboard answers for the select grid, in Debian's Chromium against a real API: a person who selects the
 * tiles with the keyboard sends a keyboard answer carrying the keyboard proof-of-work (started at the first
 * key press in the grid), the pass says `challenge.keyboard`, and the grid stays axe-clean and usable by
 * keys alone, light and dark; a pointer answer stays a bare list and pays nothing. The right tiles come from
 * opening the sealed challenge with the API's keys: test-only knowledge standing in for a person's eyes.
 */
const run = chromiumAvailable() && (await databaseAvailable());
// The API runs in this process. Long enough that the work is still going when Verify is pressed and all
// through the axe check of the wait (at 3 s the success overlay could cover the panel mid-check on a busy
// machine, which axe reports as contrast it cannot measure); the production price is checked in
// api/test/accessible-alternative.test.ts.
process.env.KEYBOARD_POW_SECONDS = '10';

const SELECT = { invisible_below: 0, image_below: 101, image_kinds: ['select'] };

describe.runIf(run)('the select grid answered with the keyboard, in Chromium', () => {
  const suite = widgetBrowserSuite('gatehouse-select-keyboard-');
  const { newPage } = suite;

  async function app() {
    const a = await suite.api.createApp({ name: 'select-keyboard', risk_policy: SELECT });
    return { ...a, auth: { 'X-App-Key': a.appKey, 'X-App-Secret': a.appSecret } };
  }

  /** A landmark page in `theme` with the widget rendered; the first init answer and the submits it sends. */
  async function widgetPage(theme: Theme, appKey: string, mode: 'embedded' | 'popup') {
    await suite.closeContext();
    const page = await newPage({ colorScheme: theme });
    await page.goto(suite.site.page(`/s-${Math.random().toString(36).slice(2)}.html`, landmarkPage(theme)));
    const submits: Request[] = [];
    page.on('request', (r) => r.url().endsWith('/v1/challenge/submit') && submits.push(r));
    const init = page
      .waitForResponse((r) => r.url().endsWith('/v1/challenge/init'), { timeout: 60_000 })
      .then((r) => r.json());
    await render(page, { appKey, apiServer: suite.api.url, theme, mode });
    return { page, init, submits };
  }

  function rightTiles(appId: string, sealed: string): number[] {
    const opened = openChallenge(suite.api.runtime.keys, appId, sealed);
    if (!opened?.img) throw new Error('no image challenge in this init answer');
    return (opened.img.answer as { indices: number[] }).indices;
  }

  const validate = (token: string, auth: Record<string, string>) =>
    suite.api.post('/v1/validate', { pass_token: token }, auth);

  /** Keys only: arrows across the grid, Space (or Enter, every other tile) on each right one. */
  async function chooseByKeys(page: Page, wanted: number[]) {
    let toggled = 0;
    for (let i = 0; i < 9; i++) {
      if (wanted.includes(i)) await press(page, toggled++ % 2 === 0 ? 'Space' : 'Enter');
      if (i < 8) await press(page, 'ArrowRight');
    }
  }

  for (const theme of THEMES) {
    const mode = theme === 'light' ? 'embedded' : 'popup';
    it(`${theme}, ${mode}: keys only from the page's field to a pass; the answer carries the keyboard proof, the wait is shown, axe-clean, focus back on the box`, async () => {
      const a = await app();
      const { page, init, submits } = await widgetPage(theme, a.appKey, mode);
      const tiles = page.locator('.tile');
      // Inline, the grid shows by itself and follows the box in the Tab order; the popup opens from the box.
      if (mode === 'embedded') await tiles.first().waitFor({ state: 'visible' });
      await page.locator('input[name="user"]').focus();
      await press(page, 'Tab');
      expect(await focusedClass(page)).toBe('button.check');
      await press(page, mode === 'popup' ? 'Enter' : 'Tab');
      await tiles.first().waitFor({ state: 'visible' });
      await expect.poll(() => focusedClass(page)).toBe('button.tile');
      const data = (await init).data;
      expect(data.image.kind).toBe('select');
      expect(data.image.keyboard_pow).toBeTruthy();
      const wanted = rightTiles(a.appId, data.challenge);
      await expectAccessible(page, `${theme} select, nothing chosen`);

      await chooseByKeys(page, wanted);
      for (let i = 0; i < 9; i++)
        expect(await tiles.nth(i).getAttribute('aria-pressed'), `tile ${i}`).toBe(String(wanted.includes(i)));
      await expectAccessible(page, `${theme} select, tiles chosen by keys`);
      await recordSaid(page);
      await press(page, 'Tab'); // the new-challenge button
      await press(page, 'Tab'); // Verify
      expect(await focusedClass(page)).toBe('button.btn');
      await press(page, 'Enter');

      // The answer waits for the work begun at the first key press: said, the panel busy, still axe-clean.
      await expect.poll(() => saidSoFar(page)).toContain('Checking your answer…');
      expect(await page.locator('.panel').getAttribute('aria-busy')).toBe('true');
      await expectAccessible(page, `${theme} select, waiting for the keyboard proof`);
      // Still waiting once axe is done, so what it judged was the wait and not the success overlay.
      expect(await page.locator('.panel').getAttribute('aria-busy')).toBe('true');
      const result = await outcome(page);
      expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
      expect(submits).toHaveLength(1);
      const sent = submits[0]!.postDataJSON().answer;
      expect(sent).toEqual({
        input: 'keyboard',
        picks: [...wanted].sort((x, y) => x - y),
        pow: { nonces: expect.any(Array), hashes: expect.any(Array) },
      });
      expect(sent.pow.nonces).toHaveLength(data.image.keyboard_pow.count);
      const verdict = await validate((result as { token: string }).token, a.auth);
      expect(verdict.body.data.risk.reasons).toContain('challenge.keyboard');
      await expect.poll(() => page.locator('.panel').count()).toBe(0);
      expect(await focusedClass(page)).toBe('button.check');
      await expectAccessible(page, `${theme} select by keys, done`);
    }, 120_000);
  }

  it('a pointer answer stays a bare list of tiles: no keyboard proof, no keyboard reason', async () => {
    const a = await app();
    const { page, init, submits } = await widgetPage('light', a.appKey, 'embedded');
    const tiles = page.locator('.tile');
    await tiles.first().waitFor({ state: 'visible' });
    const wanted = rightTiles(a.appId, (await init).data.challenge);
    for (const i of wanted) await tiles.nth(i).click();
    await page.getByRole('button', { name: 'Verify' }).click();
    const result = await outcome(page);
    expect(result).toMatchObject({ type: 'success', token: expect.stringMatching(/^pt_/) });
    expect(submits[0]?.postDataJSON().answer).toEqual([...wanted].sort((x, y) => x - y));
    const verdict = await validate((result as { token: string }).token, a.auth);
    expect(verdict.body.data.risk.reasons).not.toContain('challenge.keyboard');
  }, 90_000);
});

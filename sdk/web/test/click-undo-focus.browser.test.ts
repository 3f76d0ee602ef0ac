import { databaseAvailable } from '@gatehouse/api/testing';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { expectAccessible, landmarkPage } from './a11y.ts';
import { chromiumAvailable, widgetBrowserSuite } from './browser.ts';
import { focusedClass, press, render } from './helpers.ts';

/*
 * WCAG 2.4.3 (focus order) on the click challenge, in Debian's Chromium against a real API: a keyboard user
 * who undoes their last click keeps focus on Undo. A `disabled` Undo dropped focus to <body>, and the next
 * Tab started again at the top of the page.
 */
const run = chromiumAvailable() && (await databaseAvailable());

/** The focused element's accessible text, through the widget's shadow root. */
function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active?.getAttribute('aria-label') ?? active?.textContent?.trim() ?? '';
  });
}

describe.runIf(run)('the click challenge undone with the keyboard, in Chromium', () => {
  const suite = widgetBrowserSuite('gatehouse-click-undo-');

  it('Undo keeps focus after the last click is undone, says it cannot undo more, and stays axe-clean', async () => {
    const a = await suite.api.createApp({
      name: 'click-undo',
      risk_policy: { invisible_below: 0, image_below: 101, image_kinds: ['click'] },
    });
    const page = await suite.newPage({ colorScheme: 'light' });
    await page.goto(suite.site.page('/click-undo.html', landmarkPage('light')));
    await render(page, { appKey: a.appKey, apiServer: suite.api.url, theme: 'light', mode: 'embedded' });
    const stage = page.locator('.stage');
    await stage.waitFor({ state: 'visible', timeout: 60_000 });

    await page.locator('input[name="user"]').focus();
    await press(page, 'Tab'); // the box
    await press(page, 'Tab'); // the picture
    expect(await focusedClass(page)).toBe('div.stage pick');
    await press(page, 'Enter'); // a click where the cross stands
    await expect.poll(() => page.locator('.mark').count()).toBe(1);
    // Tab on to Undo (a new-challenge button may come first).
    for (let i = 0; i < 3 && (await focusedName(page)) !== 'Undo'; i++) await press(page, 'Tab');
    expect(await focusedName(page)).toBe('Undo');
    await press(page, 'Enter'); // undo it

    await expect.poll(() => page.locator('.mark').count()).toBe(0);
    expect(await focusedName(page)).toBe('Undo');
    const undo = page.getByRole('button', { name: 'Undo' });
    expect(await undo.getAttribute('aria-disabled')).toBe('true');
    await press(page, 'Enter'); // nothing left to undo: nothing happens, focus stays
    expect(await focusedName(page)).toBe('Undo');
    expect(await focusedClass(page)).not.toMatch(/^body/);
    await expectAccessible(page, 'light click, every click undone');
  }, 120_000);
});

/**
 * Screenshots of the challenge popup for docs: docs/images/widget-{slide,click,select}-{light,dark}.png,
 * plus the box in both themes (widget-box-{light,dark}.png). Runs a real API in-process and headless
 * Chromium; each challenge is shown mid-solve (piece moved, symbols clicked, tiles selected), using the
 * answer opened from the sealed challenge.
 *
 *   node loadtest/screenshots/widget.ts [--out DIR]   (default: docs/images)
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestApi } from '@gatehouse/api/testing';
import { chromiumAvailable, formPage, launchChromium, render, startPageServer } from '@gatehouse/web/testing';
import { openChallenge } from '../../api/src/challenges/sealed-challenge.ts';
import { buildWidget } from '../../sdk/web/build.ts';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const outDir = resolve(
  args.includes('--out') ? (args[args.indexOf('--out') + 1] as string) : join(here, '../../docs/images'),
);

if (!chromiumAvailable()) process.exit(1);
mkdirSync(outDir, { recursive: true });
const widgetDir = mkdtempSync(join(tmpdir(), 'gatehouse-shots-'));
await buildWidget({ outDir: widgetDir });
const api = await startTestApi();
const site = await startPageServer({ widgetDir, apiUrl: api.url, secrets: new Map() });
const browser = await launchChromium();
const PAGE_BG = { light: '#ffffff', dark: '#0d1117' } as const;

try {
  for (const theme of ['light', 'dark'] as const) {
    for (const kind of ['slide', 'click', 'select'] as const) {
      const app = await api.createApp({
        name: `shots-${kind}`,
        risk_policy: { invisible_below: 0, image_below: 101, image_kinds: [kind] },
      });
      const context = await browser.newContext({
        viewport: { width: 480, height: 560 },
        colorScheme: theme,
        reducedMotion: 'reduce',
      });
      const page = await context.newPage();
      await page.goto(
        site.page(
          `/${kind}-${theme}.html`,
          formPage('<div id="captcha"></div>', `<style>body{background:${PAGE_BG[theme]}}</style>`),
        ),
      );
      const init = page.waitForResponse((r) => r.url().endsWith('/v1/challenge/init'));
      await render(page, { appKey: app.appKey, apiServer: api.url, mode: 'popup', theme });
      await page.locator('.check').click();
      const data = (await (await init).json()).data;
      const answer = openChallenge(api.runtime.keys, app.appId, data.challenge)?.img?.answer as Record<
        string,
        unknown
      >;
      const panel = page.locator('.panel');
      await panel.waitFor({ state: 'visible' });
      await page.waitForTimeout(300);
      if (kind === 'slide') {
        // Halfway to the gap, with the keyboard (no submission until Enter).
        const steps = Math.floor((answer.x as number) / 2 / 20);
        for (let i = 0; i < steps; i++) await page.keyboard.press('Shift+ArrowRight');
      } else if (kind === 'click') {
        const box = await page.locator('.stage').boundingBox();
        const scale = (box?.width ?? 300) / 300;
        const targets = answer.targets as Array<{ x: number; y: number }>;
        for (const t of targets.slice(0, 2)) {
          await page.mouse.click((box?.x ?? 0) + t.x * scale, (box?.y ?? 0) + t.y * scale);
        }
      } else {
        const first = (answer.indices as number[])[0] ?? 0;
        await page.locator('.tile').nth(first).click();
      }
      await page.mouse.move(0, 0);
      const file = join(outDir, `widget-${kind}-${theme}.png`);
      await panel.screenshot({ path: file });
      console.log(file);
      if (kind === 'select') {
        // The box behind the dialog, once closed: "I'm human" waiting for a click.
        await page.keyboard.press('Escape');
        await page.locator('dialog').waitFor({ state: 'detached' });
        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        await page.evaluate(() =>
          document
            .querySelector<HTMLElement>('#captcha > div')
            ?.shadowRoot?.querySelector<HTMLElement>('.check')
            ?.blur(),
        );
        const boxFile = join(outDir, `widget-box-${theme}.png`);
        await page.locator('.box').screenshot({ path: boxFile });
        console.log(boxFile);
      }
      await context.close();
    }
  }
} finally {
  await browser.close();
  await site.close();
  await api.close();
  rmSync(widgetDir, { recursive: true, force: true });
}

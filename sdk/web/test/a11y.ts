import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { focusedClass, press } from './helpers.ts';

/** What the accessibility browser suites share: the page they judge, axe-core, the live region, the Tab key. */
const ROOT = resolve(import.meta.dirname, '../../..');
const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

export const THEMES = ['light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

/** An integrator's page with landmarks and a heading, so that axe judges the widget, not the page. */
export function landmarkPage(theme: Theme, lang = 'en'): string {
  const colours = theme === 'dark' ? 'background:#0d1117;color:#e6edf3' : 'background:#fff;color:#1f2328';
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>Sign in</title>
<style>body{font:16px system-ui;margin:24px;${colours}}form{display:grid;gap:12px;max-width:360px}</style>
<script src="/widget/gatehouse.js" async defer></script></head>
<body><main><h1>Sign in</h1><form id="login" method="post" action="/submit">
<label>User <input name="user" value="alice"></label><div id="captcha"></div>
<button id="go" type="submit">Log in</button></form></main></body></html>`;
}

type AxeRule = { id: string; help: string; nodes: Array<{ target: unknown[] }> };
type AxeResult = { violations: AxeRule[]; passes: AxeRule[]; incomplete: AxeRule[] };

/** axe-core over the whole page (shadow roots included): no WCAG 2.0–2.2 A/AA or best-practice violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const result = (await page.evaluate(() =>
    // biome-ignore lint/suspicious/noExplicitAny: axe is the global the script above defined.
    (window as any).axe.run(document, {
      runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'],
    }),
  )) as AxeResult;
  const list = (rules: AxeRule[]) =>
    rules.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')})`);
  expect(list(result.violations), label).toEqual([]);
  // Nor anything axe could not decide (text whose contrast it cannot measure, a name it cannot compare
  // with the visible label): those are left for a person to check, so none are allowed to creep in.
  expect(list(result.incomplete), `${label} (needs review)`).toEqual([]);
  // axe did look inside the widget: rules passed on nodes inside a shadow root (a target is then a path).
  const inShadow = result.passes.flatMap((r) => r.nodes).filter((n) => Array.isArray(n.target[0]));
  expect(inShadow.length, label).toBeGreaterThan(0);
}

/** What the live region says from now on, recorded in the page (the widget's shadow roots included). */
export async function recordSaid(page: Page): Promise<void> {
  await page.evaluate(() => {
    const said: string[] = [];
    (window as unknown as { said: string[] }).said = said;
    const find = (root: ParentNode): Element | null => {
      const found = root.querySelector('.msg');
      if (found) return found;
      for (const el of Array.from(root.querySelectorAll('*'))) {
        const inner = el.shadowRoot && find(el.shadowRoot);
        if (inner) return inner;
      }
      return null;
    };
    setInterval(() => {
      const text = find(document)?.textContent;
      if (text && said.at(-1) !== text) said.push(text);
    }, 50);
  });
}
export const saidSoFar = (page: Page) => page.evaluate(() => (window as unknown as { said: string[] }).said);

/** Tab from the page's field through the box and the challenge until `cls` has focus (keys only). */
export async function tabTo(page: Page, cls: string): Promise<void> {
  const reached: string[] = [];
  for (let i = 0; i < 40 && (await focusedClass(page)) !== cls; i++) {
    await press(page, 'Tab');
    reached.push(await focusedClass(page));
  }
  expect(await focusedClass(page), reached.join(' → ')).toBe(cls);
}

import { describe, expect, it } from 'vitest';
import { THEME_CSS } from './styles.ts';

/** The default colour of each theme variable in one `:host...{}` block of THEME_CSS. */
function palette(selector: string): Record<string, string> {
  const start = THEME_CSS.indexOf(`${selector}{`);
  const block = THEME_CSS.slice(start, THEME_CSS.indexOf('}', start));
  return Object.fromEntries(
    [...block.matchAll(/--(\w+):var\(--gatehouse-[\w-]+,(#[0-9a-f]{6})\)/g)].map((m) => [m[1], m[2]]),
  );
}

/** WCAG 2.x relative luminance and contrast ratio. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

describe('theme contrast (WCAG AA)', () => {
  for (const [theme, selector] of [
    ['light', ':host'],
    ['dark', ':host([data-theme=dark])'],
  ] as const) {
    it(`${theme}: text 4.5:1, controls and borders 3:1`, () => {
      const p = palette(selector);
      expect(Object.keys(p).length).toBeGreaterThanOrEqual(9);
      for (const text of ['fg', 'mu', 'er', 'ok', 'ac']) {
        expect(contrast(p[text] as string, p.bg as string), `${text} on bg`).toBeGreaterThanOrEqual(4.5);
      }
      expect(contrast(p.fg as string, p.sf as string), 'fg on surface').toBeGreaterThanOrEqual(4.5);
      expect(contrast(p.mu as string, p.sf as string), 'muted on surface').toBeGreaterThanOrEqual(4.5);
      expect(contrast(p.on as string, p.ac as string), 'button text on accent').toBeGreaterThanOrEqual(4.5);
      expect(contrast(p.bd as string, p.bg as string), 'borders').toBeGreaterThanOrEqual(3);
    });
  }
});

import type { LoaderKey } from './contract.ts';
import { EN, KEYS } from './i18n-table.ts';

/*
 * The loader's own strings (box, live announcements, dialog chrome). English is here; every other
 * language comes from the language pack (i18n-pack.ts, built as gatehouse-i18n.<hash>.js), fetched once
 * by a page in another language: it costs bytes that English pages, the loader's budget and the
 * invisible tier need not pay. Until it arrives (or if it cannot be loaded) the widget speaks English.
 * The challenge prompts live in the UI chunk (ui/strings.ts). Order of the values: i18n-table.ts's KEYS.
 */
/** Languages the widget ships, in both bundles (i18n.test.ts checks this list against the table). */
export const LANGUAGES =
  'en fr de es pt it ja zh ko ru nl ar he pl tr sv da nb fi cs uk el hu ro id vi th hi bg sk'.split(' ');

/** Languages written right to left: the widget lays itself out mirrored (dir=rtl) for them. */
export const dirOf = (lang: string): 'rtl' | 'ltr' => (lang === 'ar' || lang === 'he' ? 'rtl' : 'ltr');

/** The first supported language among the candidates (BCP 47 tags, matched on their primary subtag), else en. */
export function pickLanguage(candidates: ReadonlyArray<string | null | undefined>): string {
  for (const tag of candidates) {
    // Norwegian: `no` (and Nynorsk, `nn`) read the Bokmål strings rather than English.
    const primary = tag
      ?.toLowerCase()
      .split(/[-_]/)[0]
      ?.replace(/^n[no]$/, 'nb');
    if (primary && LANGUAGES.includes(primary)) return primary;
  }
  return 'en';
}

/** The language a widget shows: its `lang` option, else the page's <html lang>, else the browser's, else en. */
export function widgetLanguage(option: string | undefined): string {
  return pickLanguage([
    option,
    document.documentElement.lang,
    ...(navigator.languages ?? [navigator.language]),
  ]);
}

/** Looks up one loader string in a `|`-separated row (English when the row is missing). */
export function translator(row: string | undefined = EN): (key: LoaderKey) => string {
  const values = row.split('|');
  return (key) => values[KEYS.indexOf(key)] ?? key;
}

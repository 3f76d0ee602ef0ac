import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '../i18n.ts';
import { ALL_KEYS, challengeTranslator, STRINGS } from './strings.ts';

describe('challenge strings', () => {
  it('every language of the loader translates every key, with the same placeholders as English', () => {
    expect(Object.keys(STRINGS).sort()).toEqual([...LANGUAGES].sort());
    const en = challengeTranslator('en');
    const placeholders = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
    for (const lang of LANGUAGES) {
      for (const [group, text] of Object.entries(STRINGS[lang] ?? {})) {
        const count = (STRINGS.en as Record<string, string>)[group]?.split('|').length;
        expect(text.split('|'), `${lang}.${group}`).toHaveLength(count as number);
      }
      const tr = challengeTranslator(lang);
      for (const key of ALL_KEYS) {
        const raw = (s: typeof tr) => s(key, {});
        expect(raw(tr), `${lang} ${key}`).not.toBe(key);
        expect(placeholders(raw(tr)), `${lang} ${key}`).toEqual(placeholders(raw(en)));
      }
    }
  });

  it('a string parameter names another key: shapes and colours are translated inside prompts', () => {
    expect(challengeTranslator('en')('challenge.select.prompt.shape', { shape: 'star' })).toBe(
      'Select every tile with this shape: star',
    );
    expect(challengeTranslator('de')('challenge.select.prompt.colour', { colour: 'red' })).toContain('Rot');
    expect(challengeTranslator('fr')('challenge.select.tile', { row: 2, column: 3 })).toBe(
      'Ligne 2, colonne 3',
    );
    expect(challengeTranslator('xx')('challenge.slide.prompt')).toBe(
      'Drag the piece into the gap that matches its shape',
    );
    expect(challengeTranslator('en')('challenge.unknown.key')).toBe('challenge.unknown.key');
  });
});

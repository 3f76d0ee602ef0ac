import { describe, expect, it } from 'vitest';
import { LANGUAGES, pickLanguage, translator } from './i18n.ts';
import { TABLE } from './i18n-table.ts';

describe('language choice', () => {
  it('takes the first supported candidate by primary subtag, else English', () => {
    expect(pickLanguage(['pt-BR', 'en'])).toBe('pt');
    expect(pickLanguage([undefined, '', 'zh_Hans_CN'])).toBe('zh');
    expect(pickLanguage(['xx', 'de-AT'])).toBe('de');
    expect(pickLanguage(['xx'])).toBe('en');
  });

  it('Norwegian: no (the macrolanguage browsers often send) and nn read the Bokmål strings, not English', () => {
    expect(pickLanguage(['no'])).toBe('nb');
    expect(pickLanguage(['no-NO', 'en'])).toBe('nb');
    expect(pickLanguage(['nn-NO'])).toBe('nb');
    expect(pickLanguage(['nb'])).toBe('nb');
    expect(pickLanguage(['nl'])).toBe('nl');
  });

  it('ships at least the eight required languages, each with every loader string', () => {
    for (const lang of ['en', 'fr', 'de', 'es', 'pt', 'it', 'ja', 'zh', 'ar', 'he'])
      expect(LANGUAGES).toContain(lang);
    // At least 30 languages.
    expect(LANGUAGES.length).toBeGreaterThanOrEqual(30);
    // The loader's list and the language pack's table name the same languages.
    expect(Object.keys(TABLE)).toEqual(LANGUAGES);
    for (const lang of LANGUAGES) {
      const t = translator(TABLE[lang]);
      for (const key of [
        'verify',
        'verifying',
        'loading',
        'checking',
        'success',
        'failed',
        'retry',
        'expired',
        'close',
        'network',
        'unverified',
      ] as const) {
        expect(t(key), `${lang} ${key}`).not.toBe(key);
        expect(t(key)).not.toContain('|');
      }
    }
  });
});

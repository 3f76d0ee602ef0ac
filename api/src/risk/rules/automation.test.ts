import { describe, expect, it } from 'vitest';
import { automationRules } from './automation.ts';

describe('automationRules', () => {
  it('penalises a web request that sends no signals at all', () => {
    expect(automationRules(undefined, 'web').map((f) => f.reason)).toEqual(['automation.no_signals']);
    expect(automationRules(undefined, 'ios')).toEqual([]);
  });
  it('flags navigator.webdriver', () => {
    expect(automationRules({ webdriver: true }, 'web')).toEqual([
      { points: 40, reason: 'automation.webdriver' },
    ]);
  });
  it('scales headless hints, capped at 30 points', () => {
    expect(automationRules({ headless: ['no-plugins'] }, 'web')[0]?.points).toBe(10);
    expect(automationRules({ headless: ['a', 'b', 'c', 'd', 'e'] }, 'web')[0]?.points).toBe(30);
  });
  it('flags an empty languages list and a zero-sized screen', () => {
    const found = automationRules({ languages: [], screen: { w: 0, h: 0 } }, 'web').map((f) => f.reason);
    expect(found).toEqual(['automation.no_languages', 'automation.zero_screen']);
  });
  it('adds nothing for an ordinary browser', () => {
    expect(
      automationRules({ webdriver: false, languages: ['en-GB'], screen: { w: 1280, h: 800 } }, 'web'),
    ).toEqual([]);
  });
});

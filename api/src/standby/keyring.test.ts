import { describe, expect, it } from 'vitest';
import { newKid } from './keyring.ts';

describe('newKid', () => {
  it('never starts with "-" (the CLI would read the id as an option), drawing again instead', () => {
    const draws = ['-Yabcdefghij', '-Zabcdefghij', 'Aabcdefghijk'];
    expect(newKid(() => draws.shift()!)).toBe('Aabcdefghijk');
    expect(draws).toHaveLength(0);
  });

  it('is 12 base64url characters from 9 random bytes', () => {
    for (let i = 0; i < 500; i++) expect(newKid()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{11}$/);
  });
});

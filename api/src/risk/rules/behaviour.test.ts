import { describe, expect, it } from 'vitest';
import { behaviourRules } from './behaviour.ts';

describe('behaviourRules', () => {
  it('flags pointer samples at a machine-constant rhythm and along straight lines', () => {
    const found = behaviourRules({ pointer: { moves: 50, intervalStdMs: 0, straightness: 1 } }).map(
      (f) => f.reason,
    );
    expect(found).toEqual(['behaviour.pointer_constant_rhythm', 'behaviour.pointer_straight_lines']);
  });
  it('ignores too few pointer samples to judge', () => {
    expect(behaviourRules({ pointer: { moves: 3, intervalStdMs: 0, straightness: 1 } })).toEqual([]);
  });
  it('flags key presses at a constant rhythm', () => {
    expect(behaviourRules({ keys: { presses: 12, intervalStdMs: 0.3 } }).map((f) => f.reason)).toEqual([
      'behaviour.keys_constant_rhythm',
    ]);
  });
  it('adds nothing for human-irregular input or no input', () => {
    expect(
      behaviourRules({
        pointer: { moves: 80, intervalStdMs: 6.2, straightness: 0.4 },
        keys: { presses: 9, intervalStdMs: 48 },
      }),
    ).toEqual([]);
    expect(behaviourRules({})).toEqual([]);
    expect(behaviourRules(undefined)).toEqual([]);
  });
});

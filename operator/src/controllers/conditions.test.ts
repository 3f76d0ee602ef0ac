import { describe, expect, it } from 'vitest';
import { findCondition, setCondition } from './conditions.ts';
import { ConditionType, Reason } from './reasons.ts';

const t0 = new Date('2026-01-01T00:00:00.250Z');
const t1 = new Date('2026-01-01T00:05:00Z');
const t2 = new Date('2026-01-01T00:09:00Z');

describe('setCondition', () => {
  it('adds a condition with lastTransitionTime in whole seconds', () => {
    const list = setCondition(
      [],
      { type: ConditionType.Ready, status: 'False', reason: Reason.NotRegistered, message: 'waiting' },
      1,
      t0,
    );
    expect(list).toEqual([
      {
        type: 'Ready',
        status: 'False',
        observedGeneration: 1,
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'NotRegistered',
        message: 'waiting',
      },
    ]);
  });

  it('keeps lastTransitionTime when only the reason, message or generation changes', () => {
    const a = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: Reason.NotRegistered, message: 'a' },
      1,
      t0,
    );
    const b = setCondition(
      a,
      { type: 'Ready', status: 'False', reason: Reason.WorkloadsUnavailable, message: 'b' },
      2,
      t1,
    );
    expect(findCondition(b, 'Ready')).toMatchObject({
      reason: 'WorkloadsUnavailable',
      message: 'b',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
  });

  it('moves lastTransitionTime when the status flips, and again when it flips back', () => {
    const a = setCondition(
      [],
      { type: 'Ready', status: 'False', reason: Reason.NotRegistered, message: '' },
      1,
      t0,
    );
    const b = setCondition(
      a,
      { type: 'Ready', status: 'True', reason: Reason.AllRegionsServing, message: '' },
      1,
      t1,
    );
    const c = setCondition(
      b,
      { type: 'Ready', status: 'False', reason: Reason.RegionOnStandby, message: '' },
      1,
      t2,
    );
    expect(findCondition(b, 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
    expect(findCondition(c, 'Ready')?.lastTransitionTime).toBe('2026-01-01T00:09:00Z');
  });

  it('leaves the other conditions and their order alone, and does not mutate its input', () => {
    const a = setCondition(
      [],
      { type: 'Registered', status: 'True', reason: Reason.AppRegistered, message: '' },
      1,
      t0,
    );
    const b = setCondition(
      a,
      { type: 'Ready', status: 'False', reason: Reason.NotRegistered, message: '' },
      1,
      t0,
    );
    const frozen = structuredClone(b);
    const c = setCondition(
      b,
      { type: 'Registered', status: 'False', reason: Reason.AdminApiError, message: 'x' },
      2,
      t1,
    );
    expect(b).toEqual(frozen);
    expect(c.map((x) => x.type)).toEqual(['Registered', 'Ready']);
    expect(c[1]).toEqual(b[1]);
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });
});

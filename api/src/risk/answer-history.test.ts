import { describe, expect, it } from 'vitest';
import { ANSWER_HISTORY, answerFindings, historyKey, MemoryAnswerHistory } from './answer-history.ts';

const MIN = 60_000;

describe('answer history', () => {
  it('counts failures in a row; a pass ends the run, a keyboard pass is counted apart', async () => {
    const h = new MemoryAnswerHistory();
    for (let i = 0; i < 3; i++) await h.record('k', 'failed', 0);
    expect(await h.read('k', 0)).toEqual({ failures: 3, keyboard: 0 });
    await h.record('k', 'passed_keyboard', 0);
    expect(await h.read('k', 0)).toEqual({ failures: 0, keyboard: 1 });
    await h.record('k', 'failed', 0);
    await h.record('k', 'passed', 0);
    expect(await h.read('k', 0)).toEqual({ failures: 0, keyboard: 1 });
  });

  it('halves every half-life and never exceeds the cap', async () => {
    const h = new MemoryAnswerHistory();
    for (let i = 0; i < 40; i++) await h.record('k', 'failed', 0);
    expect((await h.read('k', 0)).failures).toBe(ANSWER_HISTORY.cap);
    expect((await h.read('k', ANSWER_HISTORY.halfLifeMs)).failures).toBeCloseTo(ANSWER_HISTORY.cap / 2);
  });

  it('points: two misses free, then 10 per miss up to 40; keyboard 10 per pass up to 20', () => {
    const points = (failures: number, keyboard = 0) =>
      answerFindings({ failures, keyboard }).findings.map((f) => `${f.reason}:${f.points}`);
    expect(points(1.4)).toEqual([]);
    expect(points(2)).toEqual(['answers.failed:10']);
    expect(points(4)).toEqual(['answers.failed:30']);
    expect(points(9)).toEqual(['answers.failed:40']);
    expect(points(0, 1)).toEqual(['answers.keyboard:10']);
    expect(points(0, 7)).toEqual(['answers.keyboard:20']);
  });

  it('a refusal is bounded: at the cap it lifts within halfLife x log2(cap / refuseAt), by decay alone', async () => {
    const h = new MemoryAnswerHistory();
    for (let i = 0; i < 40; i++) await h.record('office', 'failed', 0);
    const at = answerFindings(await h.read('office', 0)).refuseForSeconds;
    const bound =
      (ANSWER_HISTORY.halfLifeMs / 1000) * Math.log2(ANSWER_HISTORY.cap / ANSWER_HISTORY.refuseAt);
    expect(at).toBe(Math.ceil(bound));
    expect(bound).toBeLessThan(5 * 60);
    expect(answerFindings(await h.read('office', at * 1000)).refuseForSeconds).toBe(0);
    // Below the threshold nothing is refused, whatever the points.
    expect(answerFindings({ failures: 7, keyboard: 0 }).refuseForSeconds).toBe(0);
    // And an hour later the address is back to nothing.
    expect(answerFindings(await h.read('office', 60 * MIN)).findings).toEqual([]);
  });

  it('memory stays bounded: a spray of addresses forgets rather than grows', async () => {
    const h = new MemoryAnswerHistory(3);
    for (const k of ['a', 'b', 'c', 'd']) await h.record(k, 'failed', 0);
    expect((await h.read('a', 0)).failures).toBe(0);
    expect((await h.read('d', 0)).failures).toBe(1);
  });
});

describe('historyKey', () => {
  it('is the address for IPv4 (mapped forms folded) and the /64 for IPv6', () => {
    expect(historyKey('app_1', '198.51.100.7')).toBe(historyKey('app_1', '::ffff:198.51.100.7'));
    expect(historyKey('app_1', '198.51.100.7')).not.toBe(historyKey('app_1', '198.51.100.8'));
    expect(historyKey('app_1', '2001:db8:7:1::1')).toBe(historyKey('app_1', '2001:db8:7:1:dead:beef:0:9'));
    expect(historyKey('app_1', '2001:db8:7:1::1')).not.toBe(historyKey('app_1', '2001:db8:7:2::1'));
    expect(historyKey('app_1', '2001:db8:7:1::1')).not.toBe(historyKey('app_2', '2001:db8:7:1::1'));
  });
});

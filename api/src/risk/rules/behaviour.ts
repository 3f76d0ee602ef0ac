import type { ClientSignals, RiskFinding } from '../signals.ts';

/**
 * Behavioural signals: machine-regular input is suspicious (pointer samples at a constant interval along
 * straight lines, key presses at a constant rhythm). Their absence is not: invisible challenges often
 * start before the user touched anything.
 */
export function behaviourRules(signals: ClientSignals | undefined): RiskFinding[] {
  if (!signals) return [];
  const out: RiskFinding[] = [];
  const pointer = signals.pointer;
  if (pointer && pointer.moves >= 10) {
    if (pointer.intervalStdMs !== undefined && pointer.intervalStdMs < 0.5) {
      out.push({ points: 15, reason: 'behaviour.pointer_constant_rhythm' });
    }
    if (pointer.straightness !== undefined && pointer.straightness > 0.95) {
      out.push({ points: 15, reason: 'behaviour.pointer_straight_lines' });
    }
  }
  const keys = signals.keys;
  if (keys && keys.presses >= 6 && keys.intervalStdMs !== undefined && keys.intervalStdMs < 2) {
    out.push({ points: 15, reason: 'behaviour.keys_constant_rhythm' });
  }
  return out;
}

import type { ClientSignals, RiskFinding } from '../signals.ts';

/**
 * Automation markers the widget reports. A real widget always sends signals on the web, so their absence
 * is itself suspicious; their presence can only add points.
 */
export function automationRules(signals: ClientSignals | undefined, platform: string): RiskFinding[] {
  if (!signals) return platform === 'web' ? [{ points: 15, reason: 'automation.no_signals' }] : [];
  const out: RiskFinding[] = [];
  if (signals.webdriver) out.push({ points: 40, reason: 'automation.webdriver' });
  const hints = new Set(signals.headless ?? []);
  if (hints.size > 0)
    out.push({ points: Math.min(30, 10 * hints.size), reason: 'automation.headless_hints' });
  if (platform === 'web' && signals.languages && signals.languages.length === 0) {
    out.push({ points: 10, reason: 'automation.no_languages' });
  }
  if (signals.screen && (signals.screen.w === 0 || signals.screen.h === 0)) {
    out.push({ points: 15, reason: 'automation.zero_screen' });
  }
  return out;
}

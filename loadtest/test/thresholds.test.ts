import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_CI, ROOT } from './stack-harness.ts';

/*
 * A loaded CI machine failed a k6 `p(95)` threshold while every verification succeeded. The short forms
 * CI runs (SHORT=1) gate on correctness only: no threshold on a metric of time; the full forms keep their
 * latency goals. Read from the options k6 itself resolves (`k6 inspect`), scenario by scenario.
 */
const K6 = process.env.K6 ?? join(process.env.GATEHOUSE_TOOLS_DIR ?? join(ROOT, '.cache/tools'), 'bin/k6');
const available = existsSync(K6);
if (!available) {
  const message = `k6 not found at ${K6}: build it with 'nice bash .ci/tools.sh k6'.`;
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING the threshold check: ${message}\n`);
}

const TIMING =
  /^(http_req_duration|challenge_flow_ms|pow_solve_ms|verification_ms|switch_over_ms|switch_back_ms|latency_drift_ratio)\b/;

function thresholdsOf(scenario: string, short: boolean): string[] {
  const out = execFileSync(
    K6,
    [
      'inspect',
      ...[
        '-e',
        `SHORT=${short ? 1 : 0}`,
        '-e',
        'BASE_URL=http://127.0.0.1:1',
        '-e',
        'APP_KEY=ak_x',
        '-e',
        'APP_SECRET=x',
      ],
      join(ROOT, 'loadtest/scenarios', `${scenario}.js`),
    ],
    { encoding: 'utf8', env: { ...process.env, BASE_URL: '' } },
  );
  return Object.keys(JSON.parse(out).thresholds ?? {});
}

describe.runIf(available)(
  'k6 thresholds: correctness in the short forms, latency goals in the full ones',
  () => {
    for (const scenario of ['challenge', 'validate', 'issuance', 'soak']) {
      it(scenario, () => {
        const short = thresholdsOf(scenario, true);
        const full = thresholdsOf(scenario, false);
        expect(short.filter((metric) => TIMING.test(metric))).toEqual([]);
        expect(short).toContain('checks');
        expect(short).toContain('http_req_failed');
        expect(full.some((metric) => TIMING.test(metric))).toBe(true);
        // Everything the short form gates on, the full form gates on too.
        for (const metric of short) expect(full).toContain(metric);
      });
    }
  },
);

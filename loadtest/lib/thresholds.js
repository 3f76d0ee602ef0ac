// The shared threshold baseline (after quickpizza): every scenario starts from it and adds its own.
// Latencies are generous because the reference machine is 2 shared cores running the whole stack.
import { SHORT } from './profiles.js';

export const BASELINE = {
  // Unexpected failures (statuses the scenario did not declare expected).
  http_req_failed: ['rate<0.01'],
  // Every check the scenario makes.
  checks: ['rate>0.99'],
  // Latency of the answers the scenario expected.
  'http_req_duration{expected_response:true}': ['p(95)<500', 'p(99)<1500'],
};

// Metrics that measure time (or its drift): goals for the benchmark report and for runs on a quiet
// machine, never a gate of the short forms CI runs, where a loaded machine misses them while every
// verification succeeds. The short forms gate on correctness: failures, double spends, checks.
const TIMING =
  /^(http_req_duration|challenge_flow_ms|pow_solve_ms|verification_ms|switch_over_ms|switch_back_ms|latency_drift_ratio)\b/;

/** Whether a threshold's metric measures time rather than correctness. */
export const isTiming = (metric) => TIMING.test(metric);

/** BASELINE with `extra` added (extra's keys win); in the short forms (SHORT=1), without the timing ones. */
export function thresholds(extra = {}) {
  const all = { ...BASELINE, ...extra };
  if (!SHORT) return all;
  return Object.fromEntries(Object.entries(all).filter(([metric]) => !isTiming(metric)));
}

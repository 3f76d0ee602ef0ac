// The shared threshold baseline (after quickpizza): every scenario starts from it and adds its own.
// Latencies are generous because the reference machine is 2 shared cores running the whole stack.

export const BASELINE = {
  // Unexpected failures (statuses the scenario did not declare expected).
  http_req_failed: ['rate<0.01'],
  // Every check the scenario makes.
  checks: ['rate>0.99'],
  // Latency of the answers the scenario expected.
  'http_req_duration{expected_response:true}': ['p(95)<500', 'p(99)<1500'],
};

/** BASELINE with `extra` added (extra's keys win). */
export function thresholds(extra = {}) {
  return { ...BASELINE, ...extra };
}

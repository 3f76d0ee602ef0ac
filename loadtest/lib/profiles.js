// Load profiles (after grafana/k6 examples): one shape per intent, applied to any exec function.
// PROFILE picks one (default smoke); SHORT=1 shrinks every profile to seconds for CI.
//
//   import { scenario } from './profiles.js';
//   export const options = { scenarios: { validate: scenario('validate', { rate: 50 }) } };

const SHORT = __ENV.SHORT === '1' || __ENV.SHORT === 'true';

/** Arrival-rate shapes: `rate` is iterations per second at the profile's plateau. */
export const PROFILES = {
  // A handful of iterations: the script works and the target answers.
  smoke: (rate) => ({
    executor: 'constant-arrival-rate',
    rate: Math.max(1, Math.round(rate / 10)),
    timeUnit: '1s',
    duration: SHORT ? '5s' : '30s',
  }),
  // The expected day: constant arrival rate.
  average: (rate) => ({
    executor: 'constant-arrival-rate',
    rate,
    timeUnit: '1s',
    duration: SHORT ? '10s' : '5m',
  }),
  // Ramping past the expected rate to find where latency bends.
  stress: (rate) => ({
    executor: 'ramping-arrival-rate',
    startRate: rate,
    timeUnit: '1s',
    stages: SHORT
      ? [
          { target: rate * 2, duration: '5s' },
          { target: rate * 2, duration: '5s' },
        ]
      : [
          { target: rate * 2, duration: '2m' },
          { target: rate * 4, duration: '5m' },
          { target: rate * 4, duration: '3m' },
          { target: 0, duration: '1m' },
        ],
  }),
  // Hours at the expected rate: memory and latency drift (SOAK_DURATION overrides).
  soak: (rate) => ({
    executor: 'constant-arrival-rate',
    rate,
    timeUnit: '1s',
    duration: __ENV.SOAK_DURATION || (SHORT ? '30s' : '1h'),
  }),
  // A sudden burst and back.
  spike: (rate) => ({
    executor: 'ramping-arrival-rate',
    startRate: rate,
    timeUnit: '1s',
    stages: SHORT
      ? [
          { target: rate * 5, duration: '2s' },
          { target: rate * 5, duration: '3s' },
          { target: rate, duration: '2s' },
        ]
      : [
          { target: rate * 10, duration: '10s' },
          { target: rate * 10, duration: '1m' },
          { target: rate, duration: '10s' },
          { target: rate, duration: '2m' },
        ],
  }),
};

/** A scenario running `exec` under PROFILE (or `options.profile`), with VU pools sized for the rate. */
export function scenario(
  exec,
  { rate = 10, profile = __ENV.PROFILE || 'average', vus = 10, maxVUs = 100, ...rest } = {},
) {
  const shape = PROFILES[profile];
  if (!shape) throw new Error(`unknown PROFILE "${profile}" (smoke, average, stress, soak, spike)`);
  return { ...shape(Number(__ENV.RATE || rate)), preAllocatedVUs: vus, maxVUs, exec, ...rest };
}

/** Seconds in a k6 duration string such as '1h', '5m', '30s', '1m30s'. */
export function seconds(duration) {
  let total = 0;
  for (const [, n, unit] of String(duration).matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total += Number(n) * { h: 3600, m: 60, s: 1, ms: 0.001 }[unit];
  }
  return total;
}

/** Total seconds a scenario built by `scenario()` runs. */
export function scenarioSeconds(s) {
  if (s.duration) return seconds(s.duration);
  return (s.stages || []).reduce((sum, st) => sum + seconds(st.duration), 0);
}

export { SHORT };

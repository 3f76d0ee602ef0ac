// The full challenge flow: init, proof-of-work solved inside k6 (k6/x/gatehouse), submit, validate.
// `testApp`: a test-mode app (one Argon2id hash) at constant arrival rate: the service's own cost.
// `realPow`: an ordinary app with a browser's headers, so the invisible tier and a real scrypt 512 KiB
// puzzle (docs/pow.md), a few VUs in a loop: solve time native (Go) and the submit's verification cost.
//   loadtest/run.sh challenge [--short]
import { check } from 'k6';
import { Trend } from 'k6/metrics';
import {
  BROWSER_HEADERS,
  envelope,
  loadTarget,
  requireUp,
  solveOnHost,
  summary,
  validate,
} from '../lib/gatehouse.js';
import { SHORT, scenario } from '../lib/profiles.js';
import { thresholds } from '../lib/thresholds.js';

const target = loadTarget();
const BASE = target.regions[0].api;
const flowMs = new Trend('challenge_flow_ms', true);
const solveMs = new Trend('pow_solve_ms', true);

const scenarios = { flow: scenario('testApp', { rate: Number(__ENV.RATE || 20), vus: 10, maxVUs: 100 }) };
if (target.apps.real) {
  scenarios.real = { executor: 'constant-vus', vus: 1, duration: SHORT ? '8s' : '2m', exec: 'realPow' };
}

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios,
  thresholds: thresholds({
    'http_req_duration{name:init}': ['p(95)<500'],
    'http_req_duration{name:submit}': ['p(95)<800'],
    'challenge_flow_ms{app:test}': ['p(95)<1500'],
    // Real puzzles (scrypt 512 KiB, about 312 hashes): shown per app; a loose bound for a busy 2-core box.
    'pow_solve_ms{app:real}': ['p(95)<20000'],
    'challenge_flow_ms{app:real}': ['p(95)<25000'],
  }),
};

export function setup() {
  requireUp(BASE);
}

function flow(app, tag, headers) {
  const started = Date.now();
  const solved = solveOnHost(BASE, app.appKey, { headers, tags: { app: tag } });
  if (!check(solved, { [`${tag}: pass token`]: (x) => typeof x.token === 'string' })) {
    const r = solved.failed || solved.error;
    if (r) console.warn(`${tag}: ${r.status} ${r.body}`);
    return;
  }
  solveMs.add(solved.solveMs, { app: tag, algorithm: solved.algorithm });
  const res = validate(BASE, app, solved.token, { tags: { app: tag } });
  const body = envelope(res);
  check(res, { [`${tag}: validated`]: (r) => r.status === 200 && body && body.data.valid === true });
  flowMs.add(Date.now() - started, { app: tag });
}

export function testApp() {
  flow(target.apps.test, 'test', {});
}

export function realPow() {
  flow(target.apps.real, 'real', BROWSER_HEADERS);
}

export const handleSummary = summary('challenge');

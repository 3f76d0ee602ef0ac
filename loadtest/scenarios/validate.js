// Validate under constant arrival rate: pass tokens minted in setup() through the real flow (a test-mode
// app: one trivial hash, solved by k6/x/gatehouse), then each iteration validates one, and every tenth
// iteration replays its token (must be token_already_used: invariant 1).
//   loadtest/run.sh validate [--short]      PROFILE=stress RATE=200 loadtest/run.sh validate

import { check } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { envelope, loadTarget, mintTokens, requireUp, summary, validate } from '../lib/gatehouse.js';
import { scenario, scenarioSeconds } from '../lib/profiles.js';
import { thresholds } from '../lib/thresholds.js';

const target = loadTarget();
const BASE = target.regions[0].api;
const RATE = Number(__ENV.RATE || 50);
const s = scenario('validateToken', { rate: RATE, vus: 20, maxVUs: 200 });
// Enough tokens for every iteration the profile can start (ramping profiles peak above RATE).
const PEAK = Math.max(RATE, ...(s.stages || []).map((x) => x.target), s.rate || 0);
const TOKENS = Math.ceil(PEAK * scenarioSeconds(s) * 1.1) + 50;

// A replay's expected answer is the token_already_used verdict: HTTP 200, code -1, data.valid false.
const REPLAY_EXPECTED = http.expectedStatuses(200);
const acceptedTwice = new Counter('tokens_accepted_twice');
const exhausted = new Counter('tokens_exhausted');

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  setupTimeout: '600s',
  scenarios: { validate: s },
  thresholds: thresholds({
    'http_req_duration{name:validate}': ['p(95)<300', 'p(99)<1000'],
    tokens_accepted_twice: ['count==0'],
    tokens_exhausted: ['count==0'],
  }),
};

export function setup() {
  requireUp(BASE);
  const started = Date.now();
  const tokens = mintTokens(BASE, target.apps.test.appKey, TOKENS);
  console.log(`validate: minted ${tokens.length} pass tokens in ${Date.now() - started} ms`);
  return { tokens };
}

export function validateToken(data) {
  const i = exec.scenario.iterationInTest;
  const token = data.tokens[i];
  if (!token) {
    exhausted.add(1);
    return;
  }
  const res = validate(BASE, target.apps.test, token);
  const body = envelope(res);
  check(res, { 'validate: 200 valid': (r) => r.status === 200 && body && body.data.valid === true });
  if (i % 10 === 0) {
    const again = validate(BASE, target.apps.test, token, {
      tags: { name: 'replay' },
      responseCallback: REPLAY_EXPECTED,
    });
    const b = envelope(again);
    const used =
      again.status === 200 && b && b.error === 'token_already_used' && b.data && b.data.valid === false;
    if (!used) acceptedTwice.add(1);
    check(again, { 'replay: token_already_used': () => used });
  }
}

export const handleSummary = summary('validate');

// Server-token issuance pushed past its rate limit (free plan: 10 per second, burst 20, per app).
// 429 rate_limit_exceeded is expected and counted; thresholds hold on the rest: issued tokens stay
// under what the limit allows, and the accepted requests stay fast.
//   loadtest/run.sh issuance [--short]      RATE=100 loadtest/run.sh issuance
import { check } from 'k6';
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { envelope, loadTarget, requireUp, summary } from '../lib/gatehouse.js';
import { scenario, scenarioSeconds } from '../lib/profiles.js';
import { thresholds } from '../lib/thresholds.js';

const target = loadTarget();
const BASE = target.regions[0].api;
// The app whose limit is pushed: the stack's ordinary app (free plan), or ISSUE_APP_KEY/ISSUE_APP_SECRET.
const APP = __ENV.ISSUE_APP_KEY
  ? { appKey: __ENV.ISSUE_APP_KEY, appSecret: __ENV.ISSUE_APP_SECRET }
  : target.apps.real || target.apps.test;
const LIMIT_PER_S = Number(__ENV.ISSUE_LIMIT || 10);
const BURST = Number(__ENV.ISSUE_BURST || 20);
const s = scenario('issue', { rate: Number(__ENV.RATE || 30), vus: 10, maxVUs: 100 });
// Instances share the limit through Redis: across the whole run at most burst + limit × seconds, with slack.
const ALLOWED = Math.ceil((BURST + LIMIT_PER_S * (scenarioSeconds(s) + 1)) * 1.15);

const issued = new Counter('server_tokens_issued');
const limited = new Counter('server_tokens_rate_limited');
http.setResponseCallback(http.expectedStatuses(200, 429));

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: { issuance: s },
  thresholds: thresholds({
    server_tokens_rate_limited: ['count>0'],
    server_tokens_issued: [`count<=${ALLOWED}`, 'count>0'],
    'http_req_duration{status:200}': ['p(95)<300'],
    'http_req_duration{status:429}': ['p(95)<200'],
  }),
};

export function setup() {
  requireUp(BASE);
}

export function issue() {
  const res = http.post(`${BASE}/v1/server/challenge/issue`, JSON.stringify({ action: 'login', ttl: 60 }), {
    headers: { 'Content-Type': 'application/json', 'X-App-Key': APP.appKey, 'X-App-Secret': APP.appSecret },
    tags: { name: 'issue' },
  });
  const body = envelope(res);
  if (res.status === 200) issued.add(1);
  if (res.status === 429) limited.add(1);
  check(res, {
    'issue: 200 with sct_ or 429 rate_limit_exceeded with Retry-After': () =>
      (res.status === 200 && body && String(body.data.server_token).startsWith('sct_')) ||
      (res.status === 429 &&
        body &&
        body.error === 'rate_limit_exceeded' &&
        Number(res.headers['Retry-After']) >= 1),
  });
}

export const handleSummary = summary('issuance');

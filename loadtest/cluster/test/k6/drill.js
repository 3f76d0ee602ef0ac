// The end users of a drill on the local cluster (loadtest/cluster/test/drills.test.ts), as k6 virtual users.
// Each VU is one end user after another of one region: init → proof-of-work → submit on the region's
// main API Service, else on its bypass host (the SDK's continuity rules, sdk/node/src/headless.ts); the
// integrator validates the token as the Node SDK does (`pt_` on its main host, retried; `offline_` on the
// fallback host first) and validates it again, which must never be accepted.
//
// The test drives the drill and tells the VUs when it is over through its control URL (GET → {done}); each
// VU also reports every outcome there (POST), so the test can follow the drill as it runs. Correctness is
// decided here, by thresholds on counts (never on time: the machine is loaded):
//   for every region of STRICT_REGIONS failed_verifications{region:R} == 0 and checks{region:R} == 100 %;
//   tokens_accepted_twice == 0; validations >= MIN_VALIDATIONS; offline_tokens_accepted >= MIN_OFFLINE.
// The other regions' counts are in the summary too (thresholds that always hold make k6 keep them).
//
// Env: ENDPOINTS (JSON: {regions: [{name, api, bypass, fallback, validate}], apps: {test: {appKey,
// appSecret}}, control}; without `control`, the end users run for DURATION, default 60s), VUS (per region, default 2), PACE (seconds between one VU's end users, default
// 0.1), STRICT_REGIONS (comma-separated; default every region), MIN_VALIDATIONS, MIN_OFFLINE, NAME
// (summary file), SUMMARY_DIR.

import { check, sleep } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import {
  envelope,
  hostFailed,
  mintWithContinuity,
  postJson,
  said,
  summary,
  validate,
} from '../../../lib/gatehouse.js';
import { seconds } from '../../../lib/profiles.js';

const target = JSON.parse(open(__ENV.ENDPOINTS));
const REGIONS = target.regions;
const VUS = Number(__ENV.VUS || 2);
const PACE = Number(__ENV.PACE || 0.1);
const STRICT = (__ENV.STRICT_REGIONS || REGIONS.map((r) => r.name).join(',')).split(',').filter(Boolean);
const MIN_VALIDATIONS = Number(__ENV.MIN_VALIDATIONS || 1);
const MIN_OFFLINE = Number(__ENV.MIN_OFFLINE || 0);
const FAILOVER_WAIT_MS = 15_000;
// The Node SDK's default (maxRetries 2).
const MAX_RETRIES = Number(__ENV.MAX_RETRIES ?? 2);
// Without a control URL (a person running the drill by hand): how long the end users run.
const DURATION_S = seconds(__ENV.DURATION || '60s');

const verified = new Counter('verifications');
const failed = new Counter('failed_verifications');
// One per token the integrator judged the first time (its replays are not counted).
const validations = new Counter('validations');
const acceptedTwice = new Counter('tokens_accepted_twice');
const offline = new Counter('offline_tokens_accepted');
const clientOnly = new Counter('client_only_tokens');
// Requests to a main API host that got no answer or a 5xx (end users' and integrator's): the drill's
// own disturbance, absorbed by the continuity rules and retries; a figure, not a verdict.
const mainHostFailures = new Counter('main_host_failures');

// Answers of hosts that are down are the drill itself: only the end user's outcome is a failure.
http.setResponseCallback(http.expectedStatuses({ min: 200, max: 499 }));

const perRegion = {};
for (const r of REGIONS) {
  perRegion[`failed_verifications{region:${r.name}}`] = [STRICT.includes(r.name) ? 'count==0' : 'count>=0'];
  perRegion[`verifications{region:${r.name}}`] = ['count>=0'];
  perRegion[`client_only_tokens{region:${r.name}}`] = ['count>=0'];
  perRegion[`checks{region:${r.name}}`] = [STRICT.includes(r.name) ? 'rate==1' : 'rate>=0'];
}

export const options = {
  // NO_REUSE=1: a new connection for every request, as many distinct end users would open; otherwise a
  // VU keeps its connections, which outlive the Service's endpoints while their pod still runs.
  noConnectionReuse: __ENV.NO_REUSE === '1',
  scenarios: {
    users: {
      executor: 'per-vu-iterations',
      vus: VUS * REGIONS.length,
      iterations: 1,
      maxDuration: __ENV.MAX_DURATION || '15m',
      exec: 'users',
    },
  },
  thresholds: {
    ...perRegion,
    tokens_accepted_twice: ['count==0'],
    main_host_failures: ['count>=0'],
    validations: [`count>=${MIN_VALIDATIONS}`],
    offline_tokens_accepted: [`count>=${MIN_OFFLINE}`],
  },
};

/** The test's view of the drill: {done, phase}. No answer means the test is gone: stop. */
function drillState(startedAt) {
  if (!target.control) return { done: Date.now() - startedAt > DURATION_S * 1000, phase: 'by-hand' };
  const res = http.get(target.control, { tags: { name: 'control' }, timeout: '2s' });
  if (res.status !== 200) return { done: true, phase: 'control-gone' };
  return res.json();
}

function report(region, phase, outcome) {
  if (!target.control) return;
  postJson(target.control, { region: region.name, phase, outcome }, { tags: { name: 'control' } });
}

/**
 * The integrator, by the Node SDK's rules (sdk/node/src/transport.ts): one idempotency key for every
 * attempt; `offline_` tokens on the fallback host first, then the main host; the main host retried up to
 * MAX_RETRIES times after no answer or a 5xx. Returns the last answer and every attempt, for the log.
 */
function integratorValidate(region, token, tags) {
  const app = target.apps.test;
  const key = `k6-${exec.vu.idInTest}-${exec.vu.iterationInScenario}-${Date.now()}-${Math.random()}`;
  const attempts = [];
  if (token.startsWith('offline_')) {
    const res = validate(region.fallback, app, token, { fallback: true, idempotencyKey: key, tags });
    attempts.push(`fallback ${said(res)}`);
    const body = envelope(res);
    if (!hostFailed(res) && body?.error !== 'service_online') return { res, attempts };
  }
  let res;
  for (let retry = 0; retry <= MAX_RETRIES; retry++) {
    if (retry > 0) sleep(0.2 * 2 ** (retry - 1));
    res = validate(region.validate, app, token, { idempotencyKey: key, tags });
    attempts.push(`main ${said(res)}`);
    if (!hostFailed(res)) break;
    mainHostFailures.add(1, tags);
  }
  return { res, attempts };
}

function endUser(region, phase) {
  const tags = { region: region.name, phase };
  const minted = mintWithContinuity(region, target.apps.test.appKey, {
    tags,
    waitMs: FAILOVER_WAIT_MS,
    onMainFailed: () => mainHostFailures.add(1, tags),
    stopWhenBothDown: true,
  });
  if (!minted.token) {
    // Neither of the region's hosts answers: the SDK would hand out a client-side co_ token, which the
    // integrator cannot verify (its own risk rules decide). Counted apart, and as a failed verification.
    if (minted.bothDown) clientOnly.add(1, tags);
    failed.add(1, tags);
    check(null, { 'end user verified': () => false }, tags);
    console.error(`end user failed: region ${region.name}, phase ${phase}: ${minted.why}`);
    return 'failed';
  }
  const { res, attempts } = integratorValidate(region, minted.token, tags);
  validations.add(1, tags);
  const body = envelope(res);
  const ok = res.status === 200 && body?.data?.valid === true;
  if (!check(res, { 'end user verified': () => ok }, tags)) {
    failed.add(1, tags);
    console.error(
      `end user failed: region ${region.name}, phase ${phase}, ${minted.token.split('_')[0]}_: ${attempts.join(' → ')} ${JSON.stringify(body?.data ?? null)}`,
    );
    return 'failed';
  }
  verified.add(1, tags);
  if (minted.token.startsWith('offline_')) offline.add(1, tags);
  const { res: again } = integratorValidate(region, minted.token, { ...tags, name: 'replay' });
  const b = envelope(again);
  if (again.status === 200 && b?.data?.valid === true) acceptedTwice.add(1, tags);
  check(again, { 'replay refused': () => !(again.status === 200 && b?.data?.valid === true) }, tags);
  return minted.token.startsWith('offline_') ? 'offline' : 'ok';
}

export function users() {
  const region = REGIONS[(exec.vu.idInTest - 1) % REGIONS.length];
  const startedAt = Date.now();
  for (;;) {
    const state = drillState(startedAt);
    if (state.done) return;
    report(region, state.phase, endUser(region, state.phase));
    sleep(PACE);
  }
}

export const handleSummary = summary(__ENV.NAME || 'cluster-drill');

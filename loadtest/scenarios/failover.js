// Failover drill under load (docs/failover.md): end users verify at a constant rate (init → PoW →
// submit at their region's main API, then their backend validates; on a real failure the bypass host
// mints an offline_ token and the fallback host validates it). At KILL_AT the stack's control port
// SIGKILLs the main API instances of one region (DRILL=one, default) or of every region (DRILL=all),
// and restarts them at RESTART_AT. Each verification is replayed: a second acceptance is counted.
//
// Thresholds: failed end-user verifications 0, tokens accepted twice 0, p99 of a verification while the
// region is switching, and the switch-over / switch-back times (custom Trends, from the controller).
//   loadtest/run.sh failover [--short]      DRILL=all loadtest/run.sh failover

import { check, sleep } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import {
  envelope,
  hostFailed,
  loadTarget,
  mintWithContinuity,
  postJson,
  requireUp,
  said,
  summary,
  validate,
  waitFor,
} from '../lib/gatehouse.js';
import { SHORT } from '../lib/profiles.js';
import { thresholds } from '../lib/thresholds.js';

const target = loadTarget();
if (!target.control)
  throw new Error('failover: needs the stack (ENDPOINTS with a control URL): loadtest/run.sh failover');
const DRILL = __ENV.DRILL || 'one';
const VICTIMS = DRILL === 'all' ? target.regions : [target.regions[0]];
const KILL_AT = Number(__ENV.KILL_AT || (SHORT ? 6 : 30));
const OUTAGE = Number(__ENV.OUTAGE || (SHORT ? 8 : 60));
const AFTER = Number(__ENV.AFTER || (SHORT ? 8 : 30));
const DURATION = KILL_AT + OUTAGE + AFTER;
const FAILOVER_WAIT_MS = 15_000;

const failed = new Counter('failed_verifications');
const acceptedTwice = new Counter('tokens_accepted_twice');
const stranded = new Counter('pt_tokens_stranded');
const offline = new Counter('offline_tokens_accepted');
const verifyMs = new Trend('verification_ms', true);
const switchOver = new Trend('switch_over_ms', true);
const switchBack = new Trend('switch_back_ms', true);

// Errors from killed instances are the drill itself: only the end-user outcome counts as failure.
http.setResponseCallback(http.expectedStatuses({ min: 200, max: 499 }));

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    users: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 10),
      timeUnit: '1s',
      duration: `${DURATION}s`,
      preAllocatedVUs: 20,
      maxVUs: 100,
      exec: 'endUser',
    },
    controller: {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: 1,
      maxDuration: `${DURATION + 120}s`,
      exec: 'controller',
    },
  },
  thresholds: thresholds({
    http_req_failed: ['rate<0.5'],
    'http_req_duration{expected_response:true}': ['p(95)<1500'],
    failed_verifications: ['count==0'],
    tokens_accepted_twice: ['count==0'],
    offline_tokens_accepted: ['count>0'],
    'verification_ms{phase:switching}': ['p(99)<10000'],
    'verification_ms{phase:steady}': ['p(99)<2000'],
    switch_over_ms: ['max<5000'],
    switch_back_ms: ['max<30000'],
  }),
};

export function setup() {
  for (const r of target.regions) requireUp(r.api);
  return { startedAt: Date.now() };
}

/** steady before the kill, switching from the kill until 5 s after the restart, then recovered. */
function phase(startedAt) {
  const t = (Date.now() - startedAt) / 1000;
  if (t < KILL_AT) return 'steady';
  if (t < KILL_AT + OUTAGE + 5) return 'switching';
  return 'recovered';
}

/** The backend: main /v1/validate, then the fallback host after a real failure. */
function backendValidate(region, token, key, tags) {
  const main = validate(region.api, target.apps.test, token, { idempotencyKey: key, tags });
  if (!hostFailed(main)) return main;
  return validate(region.fallback, target.apps.test, token, { fallback: true, idempotencyKey: key, tags });
}

export function endUser(data) {
  const region =
    VICTIMS.length > 1
      ? target.regions[exec.scenario.iterationInTest % target.regions.length]
      : target.regions[0];
  const tags = { phase: phase(data.startedAt), region: region.name };
  const started = Date.now();
  let accepted = null;
  const tried = [];
  // An end user whose token died in flight with its instance (the backend had no verdict) tries again.
  for (let attempt = 0; attempt < 3 && !accepted; attempt++) {
    const { token, why } = mintWithContinuity(region, target.apps.test.appKey, {
      tags,
      waitMs: FAILOVER_WAIT_MS,
    });
    if (!token) {
      tried.push(`mint: ${why}`);
      break;
    }
    const key = `${exec.vu.idInTest}-${exec.scenario.iterationInTest}-${attempt}`;
    const res = backendValidate(region, token, key, tags);
    const body = envelope(res);
    if (res.status === 200 && body && body.data.valid === true) accepted = { token, res };
    else {
      tried.push(
        `validate ${token.split('_')[0]}_: ${said(res)}${body?.data ? ` ${JSON.stringify(body.data)}` : ''}`,
      );
      const diedInFlight =
        token.startsWith('pt_') &&
        (res.status === 0 || res.status >= 500 || (body && body.error === 'token_not_found'));
      if (!diedInFlight) break;
      stranded.add(1, tags);
    }
  }
  verifyMs.add(Date.now() - started, tags);
  if (!check(accepted, { 'end user verified': (a) => a !== null })) {
    failed.add(1, tags);
    // The threshold says how many; this says why, in the k6 output CI keeps.
    console.error(
      `end user failed: region ${region.name}, phase ${tags.phase}, t=${((started - data.startedAt) / 1000).toFixed(2)} s: ${tried.join(' | ')}`,
    );
    return;
  }
  if (accepted.token.startsWith('offline_')) offline.add(1, tags);
  // Replay: wherever the backend would send it now, a second validation is token_already_used.
  const again = backendValidate(region, accepted.token, undefined, { ...tags, name: 'replay' });
  const b = envelope(again);
  const used = b && b.error === 'token_already_used';
  if (!used && again.status === 200) acceptedTwice.add(1, tags);
  check(again, {
    'replay: token_already_used (or no host up)': () => used || again.status === 0 || again.status >= 500,
  });
}

function standbyServing(region) {
  const res = http.get(`${region.bypass}/status`, { tags: { name: 'standby_status' }, timeout: '2s' });
  return res.status === 200 && res.json('serving') === true;
}

function mainAnswers(region) {
  const res = http.get(`${region.api}/readyz`, { tags: { name: 'main_readyz' }, timeout: '2s' });
  return res.status === 200;
}

export function controller(data) {
  sleep(Math.max(0, KILL_AT - (Date.now() - data.startedAt) / 1000));
  for (const r of VICTIMS) {
    const killedAt = Date.now();
    const res = http.post(`${target.control}/kill/${r.name}`, null, { tags: { name: 'control' } });
    check(res, { 'control: killed': (x) => x.status === 200 });
    // Switch-over: SIGKILL → the region's standby serving (offline_ tokens from then on).
    const ms = waitFor(() => standbyServing(r), 20_000);
    switchOver.add(Number.isFinite(ms) ? Date.now() - killedAt : 60_000, { region: r.name });
  }
  sleep(Math.max(0, KILL_AT + OUTAGE - (Date.now() - data.startedAt) / 1000));
  for (const r of VICTIMS) {
    const restartAt = Date.now();
    // The control port answers once the instances are ready again.
    const res = postJson(
      `${target.control}/restart/${r.name}`,
      {},
      { tags: { name: 'control' }, timeout: '120s' },
    );
    check(res, { 'control: restarted': (x) => x.status === 200 });
    // Switch-back: restart → main answering and the standby stepped back (service_online).
    const ms = waitFor(() => mainAnswers(r) && !standbyServing(r), 30_000);
    switchBack.add(Number.isFinite(ms) ? Date.now() - restartAt : 120_000, { region: r.name });
  }
}

export const handleSummary = summary(`failover-${DRILL}`);

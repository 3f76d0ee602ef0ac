// Soak: the challenge flow and validation at a steady rate for a long time (SOAK_DURATION, default 1h;
// 30 s with --short), while a monitor samples every API instance's resident memory and a fixed probe's
// latency. RSS growth is each sample divided by the first. Latency drift is the median of the last
// DRIFT_WINDOW probe samples divided by the median of the first DRIFT_WINDOW: a soak looks for latency
// that stays up, and one sample caught in a scheduler stall on a shared machine is not that.
// Thresholds on the maximum of each.
//   SOAK_DURATION=4h loadtest/run.sh soak      loadtest/run.sh soak --short
import { check, sleep } from 'k6';
import http from 'k6/http';
import { Trend } from 'k6/metrics';
import { envelope, loadTarget, requireUp, solveOnHost, summary, validate } from '../lib/gatehouse.js';
import { SHORT, scenario, scenarioSeconds } from '../lib/profiles.js';
import { thresholds } from '../lib/thresholds.js';

const target = loadTarget();
const BASE = target.regions[0].api;
const load = scenario('verify', { profile: 'soak', rate: Number(__ENV.RATE || 10), vus: 10, maxVUs: 50 });
const EVERY_S = SHORT ? 3 : 30;
const DRIFT_WINDOW = 3;

const rssMb = new Trend('api_rss_mb');
const rssGrowth = new Trend('api_rss_growth_ratio');
const latencyDrift = new Trend('latency_drift_ratio');

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    load,
    monitor: {
      executor: 'constant-vus',
      vus: 1,
      duration: `${Math.ceil(scenarioSeconds(load))}s`,
      exec: 'monitor',
    },
  },
  thresholds: thresholds({
    // Resident memory never more than doubles; a probe's windowed median latency never more than triples.
    api_rss_growth_ratio: ['max<2'],
    latency_drift_ratio: ['max<3'],
  }),
};

export function setup() {
  requireUp(BASE);
}

export function verify() {
  const solved = solveOnHost(BASE, target.apps.test.appKey);
  if (!check(solved, { 'soak: pass token': (x) => typeof x.token === 'string' })) return;
  const res = validate(BASE, target.apps.test, solved.token);
  const body = envelope(res);
  check(res, { 'soak: validated': (r) => r.status === 200 && body && body.data.valid === true });
}

function rss(instance) {
  const res = http.get(`${instance}/metrics`, { tags: { name: 'metrics' }, responseType: 'text' });
  const m = /^process_resident_memory_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)/m.exec(res.body || '');
  return m ? Number(m[1]) / 1048576 : Number.NaN;
}

function probeMedianMs() {
  const times = [];
  for (let i = 0; i < 5; i++)
    times.push(http.get(`${BASE}/readyz`, { tags: { name: 'probe' } }).timings.duration);
  return median(times);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// VU-local state: the first samples are the baseline the drift is measured against.
const first = {};
const recentProbes = [];
let probeBaseline = 0;

export function monitor() {
  const instances = target.regions[0].instances.length ? target.regions[0].instances : [];
  for (const instance of instances) {
    const mb = rss(instance);
    if (!Number.isFinite(mb)) continue;
    first[instance] ??= mb;
    rssMb.add(mb, { instance });
    rssGrowth.add(mb / first[instance], { instance });
  }
  // Floors of 5 ms: sub-millisecond probes would make the ratio noise.
  recentProbes.push(Math.max(probeMedianMs(), 5));
  if (recentProbes.length > DRIFT_WINDOW) recentProbes.shift();
  if (recentProbes.length === DRIFT_WINDOW) {
    // The first full window is the baseline.
    probeBaseline ||= median(recentProbes);
    latencyDrift.add(median(recentProbes) / probeBaseline);
  }
  sleep(EVERY_S);
}

export const handleSummary = summary('soak');

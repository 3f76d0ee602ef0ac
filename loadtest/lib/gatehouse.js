// Gatehouse protocol for k6: the stack's endpoints, the challenge flow with the proof-of-work solved
// natively (k6/x/gatehouse, built into our k6 by .ci/tools.sh k6), validation, and the standby route.

import { sleep } from 'k6';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import http from 'k6/http';
import gatehouse from 'k6/x/gatehouse';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };
// A desktop browser's headers: the risk engine gives ordinary apps the invisible tier for these.
export const BROWSER_HEADERS = {
  ...JSON_HEADERS,
  'User-Agent':
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  'Accept-Language': 'en-US,en;q=0.9',
  Origin: 'http://localhost',
};
export const ACTION = 'login';

/**
 * The target: ENDPOINTS (the JSON `npm run stack` writes) and/or BASE_URL, APP_KEY, APP_SECRET.
 * BASE_URL overrides the first region's API. Read once, in the init context.
 */
export function loadTarget() {
  let doc = { regions: [], apps: {} };
  if (__ENV.ENDPOINTS) doc = JSON.parse(open(__ENV.ENDPOINTS));
  if (__ENV.BASE_URL) {
    doc.regions = doc.regions.length ? doc.regions : [{ name: 'r1', instances: [] }];
    doc.regions[0].api = __ENV.BASE_URL.replace(/\/$/, '');
  }
  if (__ENV.APP_KEY) doc.apps.test = { appKey: __ENV.APP_KEY, appSecret: __ENV.APP_SECRET };
  if (!doc.regions.length || !doc.regions[0].api) {
    throw new Error(
      'Set ENDPOINTS (the file `npm run stack` writes) or BASE_URL with APP_KEY and APP_SECRET of a test-mode app.',
    );
  }
  return doc;
}

/** setup()'s first step: fail fast, with a sentence, when the target is not up. */
export function requireUp(url) {
  const res = http.get(`${url}/readyz`, { timeout: '3s', tags: { name: 'readyz' } });
  if (res.status !== 200) {
    exec.test.abort(
      `${url}/readyz answered ${res.status || res.error}: start the stack first (loadtest/run.sh does).`,
    );
  }
}

export function postJson(url, body, params = {}) {
  return http.post(url, JSON.stringify(body), {
    ...params,
    headers: { ...JSON_HEADERS, ...(params.headers || {}) },
  });
}

/** The envelope's data, or null (the error code is in `.error` of the body). */
export function envelope(res) {
  try {
    return res.json();
  } catch (_) {
    return null;
  }
}

/** A host really failed: no answer, or a 5xx other than service_online (never a 4xx). */
export function hostFailed(res) {
  if (res.status === 0) return true;
  if (res.status < 500) return false;
  const body = envelope(res);
  return !(body && body.error === 'service_online');
}

function nonceBytes(nonce) {
  const b = new Uint8Array(4);
  b[0] = (nonce >>> 24) & 0xff;
  b[1] = (nonce >>> 16) & 0xff;
  b[2] = (nonce >>> 8) & 0xff;
  b[3] = nonce & 0xff;
  return b;
}

/**
 * Solves a puzzle (docs/pow.md): `count` ascending nonces whose hash's first 4 bytes (BE) are below target,
 * each with its hash's first 8 bytes (base64url), which bind the nonce to the work.
 */
export function solvePuzzle(p) {
  const salt = encoding.b64decode(p.salt, 'rawurl');
  const nonces = [];
  const hashes = [];
  for (let nonce = 0; nonce <= 0xffffffff && nonces.length < p.count; nonce++) {
    const key =
      p.algorithm === 'scrypt'
        ? gatehouse.scryptBytes(nonceBytes(nonce), salt, p.memoryKiB, 8, p.parallelism, 32)
        : gatehouse.argon2idBytes(nonceBytes(nonce), salt, p.iterations, p.memoryKiB, p.parallelism, 32);
    const v = new DataView(key).getUint32(0, false);
    if (v < p.target) {
      nonces.push(nonce);
      hashes.push(encoding.b64encode(key.slice(0, 8), 'rawurl'));
    }
  }
  return { nonces, hashes };
}

/**
 * How long one request of an end user waits for its answer: the Node SDK's headless client's default
 * (sdk/node/src/headless.ts, timeoutMs), so that a request that will never be answered (a connection to an
 * instance that is gone) costs what it costs the SDK, not k6's default of a minute.
 */
const END_USER_TIMEOUT = '10s';

/**
 * init → proof-of-work → submit on one host. Returns {token, res} on success, {failed: res} when the
 * host really failed, {online: true} for service_online (at init or submit), {error: res} for any other answer.
 */
export function solveOnHost(base, appKey, { headers = {}, tags = {} } = {}) {
  const init = postJson(
    `${base}/v1/challenge/init`,
    { app_key: appKey, action: ACTION },
    { headers, tags: { name: 'init', ...tags }, timeout: END_USER_TIMEOUT },
  );
  if (hostFailed(init)) return { failed: init };
  const body = envelope(init);
  if (init.status === 503) return { online: true };
  if (init.status !== 200 || !body || body.data.mode !== 'challenge' || !body.data.pow || body.data.image)
    return { error: init };
  const d = body.data;
  const started = Date.now();
  const pow = solvePuzzle(d.pow);
  const solveMs = Date.now() - started;
  const submit = postJson(
    `${base}/v1/challenge/submit`,
    { app_key: appKey, challenge_id: d.challenge_id, challenge: d.challenge, pow },
    { headers, tags: { name: 'submit', ...tags }, timeout: END_USER_TIMEOUT },
  );
  if (hostFailed(submit)) return { failed: submit };
  // A standby that stepped back between init and submit (the main API is answering again): as the SDKs
  // do, the end user goes back to the main API rather than failing.
  if (submit.status === 503) return { online: true };
  const s = envelope(submit);
  if (submit.status !== 200 || !s || typeof s.data.pass_token !== 'string') return { error: submit };
  return { token: s.data.pass_token, solveMs, algorithm: d.pow.algorithm };
}

/** /v1/validate on the main API (or /api/validate on a fallback host when `fallback`). */
export function validate(
  base,
  app,
  token,
  { fallback = false, tags = {}, idempotencyKey, responseCallback } = {},
) {
  const path = fallback ? '/api/validate' : '/v1/validate';
  return postJson(
    `${base}${path}`,
    { pass_token: token, ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}) },
    {
      headers: { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret },
      tags: { name: fallback ? 'fallback_validate' : 'validate', ...tags },
      ...(responseCallback ? { responseCallback } : {}),
    },
  );
}

/** Mints `n` pass tokens through the real flow, `parallel` at a time (setup of the validate scenarios). */
export function mintTokens(base, appKey, n, parallel = 20) {
  const tokens = [];
  while (tokens.length < n) {
    const k = Math.min(parallel, n - tokens.length);
    const inits = http.batch(
      Array.from({ length: k }, () => [
        'POST',
        `${base}/v1/challenge/init`,
        JSON.stringify({ app_key: appKey, action: ACTION }),
        { headers: JSON_HEADERS, tags: { name: 'setup_init' } },
      ]),
    );
    const submits = inits.map((r) => {
      const d = envelope(r).data;
      return [
        'POST',
        `${base}/v1/challenge/submit`,
        JSON.stringify({
          app_key: appKey,
          challenge_id: d.challenge_id,
          challenge: d.challenge,
          pow: solvePuzzle(d.pow),
        }),
        { headers: JSON_HEADERS, tags: { name: 'setup_submit' } },
      ];
    });
    for (const r of http.batch(submits)) {
      const b = envelope(r);
      if (r.status !== 200) throw new Error(`minting a token: ${r.status} ${r.body}`);
      tokens.push(b.data.pass_token);
    }
  }
  return tokens;
}

/** Waits up to `ms` for `check()` to be true, polling every `every` seconds; returns the time it took or NaN. */
export function waitFor(check, ms, every = 0.05) {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (check()) return Date.now() - started;
    sleep(every);
  }
  return Number.NaN;
}

/** handleSummary: the JSON report in SUMMARY_DIR (default loadtest/results) and the usual text on stdout. */
export function summary(name) {
  return function handleSummary(data) {
    const dir = __ENV.SUMMARY_DIR || 'loadtest/results';
    const out = { [`${dir}/${name}.json`]: JSON.stringify(data, null, 2) };
    const lines = [`\n${name}: thresholds`];
    for (const [metric, m] of Object.entries(data.metrics)) {
      if (!m.thresholds) continue;
      for (const [t, r] of Object.entries(m.thresholds))
        lines.push(`  ${r.ok ? 'ok  ' : 'FAIL'} ${metric} ${t}`);
    }
    const show = (metric) => {
      const m = data.metrics[metric];
      if (!m) return;
      const v = m.values;
      lines.push(
        `  ${metric}: ${Object.entries(v)
          .map(([k, x]) => `${k}=${typeof x === 'number' ? Math.round(x * 100) / 100 : x}`)
          .join(' ')}`,
      );
    };
    for (const metric of Object.keys(data.metrics).sort())
      if (!metric.startsWith('http_req_') || metric === 'http_req_duration' || metric === 'http_req_failed')
        show(metric);
    out.stdout = `${lines.join('\n')}\n`;
    return out;
  };
}

/** An answer in a few words for the log: status and error code, or k6's transport error. */
export function said(res) {
  if (!res) return 'no request';
  if (res.status === 0) return `no answer (${res.error})`;
  const body = envelope(res);
  return `${res.status} ${body?.error ?? ''}`.trim();
}

/** What solveOnHost's outcome was, for the log. */
function outcome(host, x) {
  if (x.failed) return `${host} failed: ${said(x.failed)}`;
  if (x.online) return `${host} service_online`;
  return `${host} answered ${said(x.error)}`;
}

/**
 * One end user by the SDK's continuity rules (sdk/node/src/headless.ts): the region's main API; after a
 * real failure there, its bypass host, waiting with back-off while that answers service_online (the
 * standby has not seen the outage yet), for at most `waitMs`. Returns {token}, or {why} with the last
 * outcome of each host for the failure's log line. `onMainFailed` is called for each real failure of the
 * main host; with `stopWhenBothDown` a round where neither host answered ends it ({why, bothDown}: the
 * client-only path), otherwise it is tried again.
 */
export function mintWithContinuity(
  region,
  appKey,
  { tags, waitMs, onMainFailed = () => {}, stopWhenBothDown = false },
) {
  const deadline = Date.now() + waitMs;
  let why = 'failover wait over before a first round';
  for (let round = 0; Date.now() < deadline; round++) {
    const main = solveOnHost(region.api, appKey, { tags });
    if (main.token) return { token: main.token };
    if (main.failed) onMainFailed();
    why = outcome('main', main);
    if (!main.failed) return { why }; // a 4xx answer: the same request elsewhere would get it too
    const standby = solveOnHost(region.bypass, appKey, { tags });
    if (standby.token) return { token: standby.token };
    why = `${why}; ${outcome('bypass', standby)}`;
    if (standby.failed && stopWhenBothDown) return { why, bothDown: true };
    if (!standby.online && !standby.failed) return { why };
    sleep(Math.min(1, 0.1 * 2 ** round));
  }
  return { why: `${why} (failover wait of ${waitMs} ms over)` };
}

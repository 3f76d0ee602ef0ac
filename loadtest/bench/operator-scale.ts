/**
 * The operator at scale on a real control plane (etcd, kube-apiserver, kube-controller-manager from
 * .cache/tools/bin): N Apps of R regions each, the operator as its own process (src/main.ts, its own
 * RBAC, leader election off, the shipped rate limit) against an in-process admin API. Reports the
 * operator's peak resident memory and heap, its CPU, requests to the apiserver per App (by resource),
 * what queued the reconciles, the time until every App is reconciled (Registered, observedGeneration
 * current), then a quiet period's requests; with --ready, the time until every App is Ready (the bench
 * marks pods Running and Ready, standing in for the kubelets this control plane does not have); with
 * --restart, a second operator process taking over the settled fleet (what a new leader does).
 *
 *   npx node loadtest/bench/operator-scale.ts [--apps 200] [--regions 3] [--quiet-seconds 60] [--ready] [--restart]
 *
 * Each region runs one replica of each role (api, bypass, fallback): the pods are the controller-
 * manager's work, not the operator's, and fewer of them keep the machine on the operator.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startTestApi } from '@gatehouse/api/testing';
import {
  applyApp,
  appSpec,
  condition,
  createNamespace,
  getApp,
  markPodsReady,
  region,
  startClusterWithOperator,
} from '@gatehouse/operator/testing';

const { values } = parseArgs({
  options: {
    apps: { type: 'string', default: '200' },
    regions: { type: 'string', default: '3' },
    'quiet-seconds': { type: 'string', default: '60' },
    ready: { type: 'boolean', default: false },
    restart: { type: 'boolean', default: false },
  },
});
const N = Number(values.apps);
const R = Number(values.regions);
const QUIET_S = Number(values['quiet-seconds']);
const NS = 'bench';
const REGION_NAMES = ['eu', 'us', 'ap', 'sa', 'af', 'me', 'oc', 'an', 'ca', 'mx'].slice(0, R);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const { cp, admin } = await startClusterWithOperator();
const api = await startTestApi();
await createNamespace(admin, NS);
const work = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
const kubeconfig = join(work, 'operator.kubeconfig');
writeFileSync(kubeconfig, cp.kubeConfig('operator').exportConfig(), { mode: 0o600 });

function startOperatorProcess() {
  const child = spawn(process.execPath, [join(import.meta.dirname, '../../operator/src/main.ts')], {
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      GATEHOUSE_ADMIN_URL: api.url,
      GATEHOUSE_ADMIN_TOKEN: api.runtime.adminToken,
      GATEHOUSE_STANDBY_SYNC_TOKEN: 'bench',
      LEADER_ELECT: 'false',
      MANAGE_CRD: 'false',
      HEALTH_PORT: '0',
      METRICS_PORT: '0',
      BIND_ADDRESS: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = new Promise<string>((resolve, reject) => {
    let buffered: string | undefined = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (buffered === undefined) return;
      buffered += chunk.toString();
      const match = buffered.match(/"metrics":"(http:[^"]+)"/);
      if (match?.[1]) {
        buffered = undefined;
        resolve(match[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`the operator exited (${code})`)));
  });
  return { child, url };
}
const stopOperatorProcess = async (child: ReturnType<typeof spawn>) => {
  const exited = new Promise((r) => child.on('exit', r));
  child.kill('SIGTERM');
  await exited;
};
let operator = startOperatorProcess();
let metricsUrl = await operator.url;

const scrape = async () => {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  const labelled = (name: string, label: (labels: Record<string, string>) => string) => {
    const out: Record<string, number> = {};
    for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
      const labels = Object.fromEntries(
        [...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]),
      );
      const key = label(labels as Record<string, string>);
      out[key] = (out[key] ?? 0) + Number(m[2]);
    }
    return out;
  };
  return {
    rss: sum('process_resident_memory_bytes'),
    heap: sum('nodejs_heap_size_used_bytes'),
    cpu: sum('process_cpu_seconds_total'),
    requests: sum('gatehouse_operator_kube_requests_total'),
    lagP99: sum('nodejs_eventloop_lag_p99_seconds'),
    reconciles: sum('gatehouse_operator_reconcile_total'),
    byRequest: labelled('gatehouse_operator_kube_requests_total', (l) => `${l.verb} ${l.resource}`),
    triggers: labelled('gatehouse_operator_reconcile_triggers_total', (l) => l.source ?? ''),
  };
};
const diff = (after: Record<string, number>, before: Record<string, number>, per = 1) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([k, n]) => [k, +((n - (before[k] ?? 0)) / per).toFixed(2)] as const)
      .filter(([, n]) => n > 0),
  );
let peak = { rss: 0, heap: 0, lagP99: 0 };
const sampler = setInterval(async () => {
  try {
    const s = await scrape();
    peak = {
      rss: Math.max(peak.rss, s.rss),
      heap: Math.max(peak.heap, s.heap),
      lagP99: Math.max(peak.lagP99, s.lagP99),
    };
  } catch {}
}, 500);
/** Waits until no reconcile for `ms`. */
async function settle(ms: number) {
  let last = (await scrape()).reconciles;
  let still = Date.now();
  while (Date.now() - still < ms) {
    await sleep(500);
    const now = (await scrape()).reconciles;
    if (now !== last) [last, still] = [now, Date.now()];
  }
}

await sleep(3000);
const idle = await scrape();
const started = Date.now();
// Every region's main API answers its probes from a listener of its own: the admin API shares this
// process with the polling below, and a slow answer would flip verdicts and measure switching instead.
const readyz = createServer((_req, res) => res.writeHead(200).end('ok'));
readyz.listen(0, '127.0.0.1');
await once(readyz, 'listening');
const probeUrl = `http://127.0.0.1:${(readyz.address() as AddressInfo).port}`;
for (let i = 0; i < N; i++) {
  const regions = REGION_NAMES.map((name) =>
    region(name, { probeUrl, replicas: 1, standby: { replicas: 1 } }),
  );
  await applyApp(admin, NS, `app${i}`, appSpec({ regions }));
}
const applied = Date.now();
const count = async (done: (app: Awaited<ReturnType<typeof getApp>>) => boolean) => {
  let n = 0;
  for (let i = 0; i < N; i++) if (done(await getApp(admin, NS, `app${i}`))) n++;
  return n;
};
const reconciledApp = (app: Awaited<ReturnType<typeof getApp>>) =>
  condition(app, 'Registered')?.status === 'True' && app?.status?.observedGeneration === 1;
for (;;) {
  const done = await count(reconciledApp);
  if (done === N) break;
  if (Date.now() - started > 30 * 60_000) throw new Error(`only ${done}/${N} reconciled after 30 minutes`);
  await sleep(2000);
}
const firstPassMs = Date.now() - started;
await settle(5000);
const settledMs = Date.now() - started;
const afterSettle = await scrape();
await sleep(QUIET_S * 1000);
const afterQuiet = await scrape();

let readyMs: number | undefined;
if (values.ready) {
  for (;;) {
    await markPodsReady(admin, NS);
    const ready = await count((app) => condition(app, 'Ready')?.status === 'True');
    if (ready === N) break;
    if (Date.now() - started > 60 * 60_000) throw new Error(`only ${ready}/${N} Ready after an hour`);
    await sleep(2000);
  }
  readyMs = Date.now() - started;
}
const afterReady = await scrape();

let takeover: Record<string, unknown> | undefined;
if (values.restart) {
  await stopOperatorProcess(operator.child);
  const t0 = Date.now();
  operator = startOperatorProcess();
  metricsUrl = await operator.url;
  const fresh = await scrape();
  for (;;) {
    if ((await scrape()).reconciles >= N) break;
    if (Date.now() - t0 > 30 * 60_000) throw new Error('the second operator did not reconcile every App');
    await sleep(250);
  }
  const firstPassDone = Date.now() - t0;
  await settle(5000);
  const done = await scrape();
  takeover = {
    everyAppReconciledSeconds: +(firstPassDone / 1000).toFixed(1),
    settledSeconds: +((Date.now() - t0 - 5000) / 1000).toFixed(1),
    reconcilesPerApp: +((done.reconciles - fresh.reconciles) / N).toFixed(2),
    requestsPerApp: +((done.requests - fresh.requests) / N).toFixed(2),
    requestsPerAppByResource: diff(done.byRequest, fresh.byRequest, N),
    rssMiB: +(done.rss / 2 ** 20).toFixed(1),
  };
}
clearInterval(sampler);

const MiB = 2 ** 20;
const perMinute = (ms: number) => 60_000 / ms / N;
const report = {
  apps: N,
  regionsPerApp: R,
  idleRssMiB: +(idle.rss / MiB).toFixed(1),
  peakRssMiB: +(peak.rss / MiB).toFixed(1),
  peakHeapMiB: +(peak.heap / MiB).toFixed(1),
  settledRssMiB: +(afterQuiet.rss / MiB).toFixed(1),
  peakEventLoopLagP99Ms: +(peak.lagP99 * 1000).toFixed(1),
  createSeconds: +((applied - started) / 1000).toFixed(1),
  timeToReconciledSeconds: +(firstPassMs / 1000).toFixed(1),
  timeToSettledSeconds: +((settledMs - 5000) / 1000).toFixed(1),
  ...(readyMs !== undefined ? { timeToReadySeconds: +(readyMs / 1000).toFixed(1) } : {}),
  firstPassCpuSeconds: +(afterSettle.cpu - idle.cpu).toFixed(1),
  firstPassRequestsPerApp: +((afterSettle.requests - idle.requests) / N).toFixed(1),
  firstPassReconcilesPerApp: +((afterSettle.reconciles - idle.reconciles) / N).toFixed(2),
  firstPassRequestsPerAppByResource: diff(afterSettle.byRequest, idle.byRequest, N),
  firstPassTriggersPerApp: diff(afterSettle.triggers, idle.triggers, N),
  quietReconcilesPerAppPerMinute: +(
    (afterQuiet.reconciles - afterSettle.reconciles) *
    perMinute(QUIET_S * 1000)
  ).toFixed(2),
  quietRequestsPerAppPerMinute: +(
    (afterQuiet.requests - afterSettle.requests) *
    perMinute(QUIET_S * 1000)
  ).toFixed(2),
  quietRequests: diff(afterQuiet.byRequest, afterSettle.byRequest),
  ...(values.ready
    ? {
        readyPhaseRequestsPerApp: +((afterReady.requests - afterQuiet.requests) / N).toFixed(1),
        readyPhaseCpuSeconds: +(afterReady.cpu - afterQuiet.cpu).toFixed(1),
      }
    : {}),
  ...(takeover ? { takeover } : {}),
};
console.log(JSON.stringify(report, null, 1));
await stopOperatorProcess(operator.child);
readyz.close();
await api.close();
await cp.stop();
process.exit(0);

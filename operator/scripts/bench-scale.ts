/**
 * The operator at scale on a real control plane (etcd, kube-apiserver, kube-controller-manager from
 * .cache/tools/bin): N Apps of R regions each, the operator as its own process (src/main.ts, its own
 * RBAC, leader election off, the shipped rate limit) against an in-process admin API. Reports the
 * operator's peak resident memory and heap, its CPU, requests to the apiserver per App, and the time
 * until every App is reconciled (Registered, observedGeneration current), then a quiet minute's requests.
 *
 *   npx node operator/scripts/bench-scale.ts [--apps 200] [--regions 3] [--quiet-seconds 60]
 *
 * The pods never run (no kubelet): "reconciled" is every object applied and the app registered, which
 * is the operator's whole first pass.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startTestApi } from '../../api/test/harness.ts';
import { applyApp, condition, createNamespace, getApp, startClusterWithOperator } from '../test/cluster.ts';
import { appSpec, region } from '../test/fixtures.ts';

const { values } = parseArgs({
  options: {
    apps: { type: 'string', default: '200' },
    regions: { type: 'string', default: '3' },
    'quiet-seconds': { type: 'string', default: '60' },
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

const operator = spawn(process.execPath, [join(import.meta.dirname, '../src/main.ts')], {
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
const metricsUrl = await new Promise<string>((resolve, reject) => {
  let buffered = '';
  operator.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const match = buffered.match(/"metrics":"(http:[^"]+)"/);
    if (match?.[1]) resolve(match[1]);
  });
  operator.on('exit', (code) => reject(new Error(`the operator exited (${code})`)));
});

const scrape = async () => {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  return {
    rss: sum('process_resident_memory_bytes'),
    heap: sum('nodejs_heap_size_used_bytes'),
    cpu: sum('process_cpu_seconds_total'),
    requests: sum('gatehouse_operator_kube_requests_total'),
    lagP99: sum('nodejs_eventloop_lag_p99_seconds'),
    reconciles: sum('gatehouse_operator_reconcile_total'),
    results: [
      ...text.matchAll(
        /^gatehouse_operator_(reconcile_total|reconcile_triggers_total|workqueue_adds_total|workqueue_retries_total)(\{[^}]*\})? (\S+)$/gm,
      ),
    ].map((m) => `${m[1]}${m[2] ?? ''}=${m[3]}`),
    verbs: Object.fromEntries(
      [...text.matchAll(/^gatehouse_operator_kube_requests_total\{verb="(\w+)"\} (\S+)$/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    ) as Record<string, number>,
  };
};
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
  const regions = REGION_NAMES.map((name) => region(name, { probeUrl }));
  await applyApp(admin, NS, `app${i}`, appSpec({ regions }));
}
const applied = Date.now();
const reconciled = async () => {
  let done = 0;
  for (let i = 0; i < N; i++) {
    const app = await getApp(admin, NS, `app${i}`);
    if (condition(app, 'Registered')?.status === 'True' && app?.status?.observedGeneration === 1) done++;
  }
  return done;
};
for (;;) {
  const done = await reconciled();
  if (done === N) break;
  if (Date.now() - started > 30 * 60_000) throw new Error(`only ${done}/${N} reconciled after 30 minutes`);
  await sleep(2000);
}
const firstPassMs = Date.now() - started;
const afterPass = await scrape();
await sleep(QUIET_S * 1000);
const afterQuiet = await scrape();
clearInterval(sampler);

const MiB = 2 ** 20;
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
  firstPassCpuSeconds: +(afterPass.cpu - idle.cpu).toFixed(1),
  firstPassRequestsPerApp: +((afterPass.requests - idle.requests) / N).toFixed(1),
  firstPassReconcilesPerApp: +((afterPass.reconciles - idle.reconciles) / N).toFixed(1),
  quietReconcilesPerAppPerMinute: +(
    ((afterQuiet.reconciles - afterPass.reconciles) / N) *
    (60 / QUIET_S)
  ).toFixed(2),
  quietRequestsByVerb: Object.fromEntries(
    Object.entries(afterQuiet.verbs).map(([verb, n]) => [verb, n - (afterPass.verbs[verb] ?? 0)]),
  ),
  quietRequestsPerAppPerMinute: +(((afterQuiet.requests - afterPass.requests) / N) * (60 / QUIET_S)).toFixed(
    2,
  ),
};
console.log(JSON.stringify(report));
if (process.env.BENCH_DEBUG) console.log(afterPass.results, afterQuiet.results);
operator.kill('SIGTERM');
await new Promise((r) => operator.on('exit', r));
readyz.close();
await api.close();
await cp.stop();
process.exit(0);

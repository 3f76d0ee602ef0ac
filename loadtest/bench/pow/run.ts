/**
 * Proof-of-work benchmark: `npx node loadtest/bench/pow/run.ts` (POW_BENCH_ROUNDS, default 3; POW_BENCH_MS per
 * measurement, default 1000; POW_BENCH_ONLY, a case-insensitive pattern, keeps the candidates whose id matches). Builds the native baselines and browser bundles into .cache/pow-bench, then in
 * each round measures every candidate in a Chromium Web Worker, in Node (hash-wasm) and natively, back to
 * back so each ratio compares figures taken within seconds of each other; prints medians over rounds, then
 * the peers' default solves in the same browser. Writes .cache/pow-bench/results.{json,md}.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ask, openPage, rendererCpuMs, startWorker, stopWorkers } from './browser/page.ts';
import { buildBrowser, buildNative, cacheDir, serve } from './build.ts';
import { CANDIDATES, memoryKiB, perSecond, type Rate } from './candidates.ts';
import { measure } from './measure.ts';
import { nativePeerRate, nativeRate } from './native.ts';
import { peerCases } from './peers.ts';

const ROUNDS = Number(process.env.POW_BENCH_ROUNDS ?? 3);
const MS = Number(process.env.POW_BENCH_MS ?? 1000);
// POW_BENCH_PEERS: '0' leaves the peers out; another value other than '1' keeps the solvers whose id matches it.
const PEERS = process.env.POW_BENCH_PEERS !== '0';
const PEER_ONLY = new RegExp(
  /^[01]?$/.test(process.env.POW_BENCH_PEERS ?? '') ? '' : process.env.POW_BENCH_PEERS!,
  'i',
);
const ONLY = new RegExp(process.env.POW_BENCH_ONLY ?? '', 'i');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en') : x.toPrecision(3));
const log = (line: string) => process.stderr.write(`${line}\n`);

const bins = buildNative();
await buildBrowser();
const { url, server } = await serve();
const { browser, page, version } = await openPage(url);

const machine = {
  date: new Date().toISOString(),
  nproc: execFileSync('nproc', { encoding: 'utf8' }).trim(),
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  chromium: version,
  go: execFileSync('go', ['version'], { encoding: 'utf8' }).trim(),
  rounds: ROUNDS,
  msPerMeasurement: MS,
};

const rows = CANDIDATES.filter((c) => ONLY.test(c.id)).map((c) => ({
  c,
  browser: [] as number[],
  node: [] as number[],
  native: [] as number[],
  ratio: [] as number[],
  sources: [] as string[],
}));

/** Chromium: a fresh worker warms up (WASM compiled, one hash), then measures; renderer CPU time counts. */
async function inChromium(c: (typeof CANDIDATES)[number]): Promise<number> {
  const index = await startWorker(page, '/bench-worker.js');
  await ask(page, index, { type: 'measure', candidate: c, ms: 0, warm: true });
  const cpu0 = rendererCpuMs();
  const { data } = await ask<{ ok: boolean; result: Rate; error?: string }>(page, index, {
    type: 'measure',
    candidate: c,
    ms: MS,
    warm: false,
  });
  const cpuMs = rendererCpuMs() - cpu0;
  await stopWorkers(page);
  if (!data.ok) throw new Error(`${c.id} in Chromium: ${data.error}`);
  return perSecond({ ...data.result, cpuMs });
}

/** Node: the same hash-wasm code in this process, counted per CPU-second of the process. */
async function inNode(c: (typeof CANDIDATES)[number]): Promise<number> {
  await measure(c, 0);
  const cpu0 = process.cpuUsage();
  const rate = await measure(c, MS, false);
  const cpu = process.cpuUsage(cpu0);
  return perSecond({ ...rate, cpuMs: (cpu.user + cpu.system) / 1000 });
}

for (let round = 1; round <= ROUNDS; round++) {
  for (const row of rows) {
    const br = await inChromium(row.c);
    const n = await inNode(row.c);
    const nat = nativeRate(row.c, bins, MS);
    row.browser.push(br);
    row.node.push(n);
    row.native.push(nat.best);
    row.ratio.push(nat.best / br);
    row.sources.push(nat.source);
    const all = Object.entries(nat.all)
      .map(([k, v]) => `${k} ${fmt(v)}`)
      .join(', ');
    log(
      `round ${round} ${row.c.id}: chromium ${fmt(br)}/s node ${fmt(n)}/s native ${fmt(nat.best)}/s [${all}]`,
    );
  }
}

const peers = [];
for (const peer of PEERS ? peerCases().filter((p) => PEER_ONLY.test(p.id)) : []) {
  const solves = [];
  const natives = [];
  for (let i = 0; i < peer.reps; i++) {
    const s = await peer.solve(page);
    const nat = nativePeerRate(peer.nativeKey, bins, MS);
    solves.push(s);
    natives.push(nat.best);
    log(
      `${peer.id} rep ${i + 1}: ${Math.round(s.cpuMs)} ms CPU, ${Math.round(s.wallMs)} ms wall, ${s.attempts} attempts; native ${fmt(nat.best)}/s (${nat.source})`,
    );
  }
  const rate = median(solves.map((s) => (s.attempts * 1000) / s.cpuMs));
  peers.push({
    id: peer.id,
    difficulty: peer.difficulty,
    expected: peer.expected,
    solves,
    medianMs: median(solves.map((s) => s.cpuMs)),
    medianWallMs: median(solves.map((s) => s.wallMs)),
    browserRate: rate,
    nativeRate: median(natives),
    ratio: median(natives) / rate,
  });
}
await browser.close();
server.close();

/** The source that was fastest in most rounds. */
const usual = (sources: string[]) =>
  [...sources].sort(
    (x, y) => sources.filter((s) => s === y).length - sources.filter((s) => s === x).length,
  )[0];
const secs = (ms: number) => (ms / 1000).toFixed(2);

const md: string[] = [
  `Machine: ${machine.nproc} cores, ${machine.cpu}; Chromium ${machine.chromium}, Node ${machine.node}, ${machine.go}; ${machine.date.slice(0, 10)}.`,
  `Rates are hashes per CPU-second of the process doing the work (one core), medians of ${ROUNDS} rounds × ${MS} ms; each round measures Chromium, Node and native back to back, and the ratio is the median of the per-round ratios.`,
  '',
  '| candidate | memory | Chromium worker hashes/s | Chromium ms/hash | Node (hash-wasm) hashes/s | best native hashes/s (source) | native ÷ Chromium |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.c.id} | ${memoryKiB(r.c) / 1024} MiB | ${fmt(median(r.browser))} | ${fmt(1000 / median(r.browser))} | ${fmt(median(r.node))} | ${fmt(median(r.native))} (${usual(r.sources)}) | ${median(r.ratio).toFixed(2)}× |`,
  ),
  '',
  '| solver (one Web Worker) | difficulty | expected attempts | solve, Chromium CPU s: median (each rep) | wall s, median | Chromium attempts/CPU-s | native attempts/s | native ÷ Chromium |',
  '|---|---|---|---|---|---|---|---|',
  ...peers.map(
    (p) =>
      `| ${p.id} | ${p.difficulty} | ${fmt(p.expected)} | ${secs(p.medianMs)} (${p.solves.map((s) => secs(s.cpuMs)).join(', ')}) | ${secs(p.medianWallMs)} | ${fmt(p.browserRate)} | ${fmt(p.nativeRate)} | ${p.ratio.toFixed(2)}× |`,
  ),
];
writeFileSync(join(cacheDir, 'results.json'), JSON.stringify({ machine, rows, peers }, null, 2));
writeFileSync(join(cacheDir, 'results.md'), `${md.join('\n')}\n`);
process.stdout.write(`${md.join('\n')}\n`);

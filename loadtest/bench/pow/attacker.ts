/**
 * The attacker at full strength against the widget: scrypt (r = 8) hashes per CPU-second in a Chromium Web
 * Worker (hash-wasm, the widget's code), in OpenSSL one at a time (node:crypto, the server's verifier, and a
 * C program), and in SIMD lanes (AVX2, AVX-512 where present), each native solver first checked against the
 * server's verifier; then the attacker's cost per 1,000 passes beside solving farms' prices.
 *
 *   npx node loadtest/bench/pow/attacker.ts
 *   POW_ATTACK_N=512,4096,16384  scrypt N values (KiB per hash) to measure; the first one is the default's
 *   POW_ATTACK_ROUNDS=3  POW_ATTACK_MS=1500
 *
 * Writes .cache/pow-bench/attacker.json and prints the Markdown tables of docs/pow.md ("The attacker at full
 * strength", "Attacker economics").
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POW_POLICY, difficultyForScore } from '../../../core/src/pow/difficulty.ts';
import { expectedAttempts } from '../../../core/src/pow/params.ts';
import { createPuzzle } from '../../../core/src/pow/puzzle.ts';
import { ask, openPage, rendererCpuMs, startWorker, stopWorkers } from './browser/page.ts';
import { buildBrowser, cacheDir, serve } from './build.ts';
import { type Candidate, perSecond, type Rate } from './candidates.ts';
import { economicsTable } from './economics.ts';
import { buildLanes, checkAgainstServer, laneRate } from './lanes.ts';
import { measureOpenSsl } from './native-node.ts';

const SIZES = (process.env.POW_ATTACK_N ?? '512,4096,16384').split(',').map(Number);
const ROUNDS = Number(process.env.POW_ATTACK_ROUNDS ?? 3);
const MS = Number(process.env.POW_ATTACK_MS ?? 1500);
const log = (line: string) => process.stderr.write(`${line}\n`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en') : x.toPrecision(3));

const bins = buildLanes();
const defaultPuzzle = createPuzzle(difficultyForScore(0));
for (const bin of bins) {
  await checkAgainstServer(bin, defaultPuzzle);
  log(`${bin.id}: 64 hashes equal the server verifier's; its solution of a default puzzle passes`);
}
await buildBrowser();
const { url, server } = await serve();
const { browser, page, version } = await openPage(url);

async function inChromium(c: Candidate): Promise<number> {
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

type Row = { n: number; rates: Record<string, number[]> };
const rows: Row[] = SIZES.map((n) => ({ n, rates: {} }));
const push = (row: Row, key: string, value: number) => {
  row.rates[key] = [...(row.rates[key] ?? []), value];
};
for (let round = 1; round <= ROUNDS; round++) {
  for (const row of rows) {
    const c: Candidate = { id: `scrypt N=${row.n}`, kind: 'scrypt', n: row.n };
    const chromium = await inChromium(c);
    push(row, 'chromium', chromium);
    push(row, 'node-openssl', perSecond(measureOpenSsl(c, MS)));
    for (const bin of bins) push(row, bin.id, perSecond(laneRate(bin, row.n, MS)));
    const best = Math.max(...bins.map((b) => row.rates[b.id]!.at(-1)!), row.rates['node-openssl']!.at(-1)!);
    push(row, 'ratio', best / chromium);
    log(
      `round ${round} N=${row.n}: ${Object.entries(row.rates)
        .map(([k, v]) => `${k} ${fmt(v.at(-1)!)}`)
        .join(', ')}`,
    );
  }
}
await browser.close();
server.close();

const machine = {
  date: new Date().toISOString(),
  nproc: execFileSync('nproc', { encoding: 'utf8' }).trim(),
  cpu: cpus()[0]?.model ?? 'unknown',
  chromium: version,
  node: process.version,
  cc: execFileSync('cc', ['--version'], { encoding: 'utf8' }).split('\n')[0],
  load: execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim(),
};
const summary = rows.map((r) => ({
  n: r.n,
  ...Object.fromEntries(Object.entries(r.rates).map(([k, v]) => [k, median(v)])),
  rounds: r.rates,
}));
writeFileSync(
  join(cacheDir, 'attacker.json'),
  JSON.stringify({ machine, rounds: ROUNDS, ms: MS, summary }, null, 2),
);

const laneIds = bins.filter((b) => b.id !== 'openssl').map((b) => b.id);
const md = [
  `Machine: ${machine.nproc} cores, ${machine.cpu}; Chromium ${machine.chromium}, Node ${machine.node}, ${machine.cc}; load average ${machine.load.split(' ').slice(0, 3).join(' ')}; ${machine.date.slice(0, 16)}Z. Hashes per CPU-second of the process doing the work, medians of ${ROUNDS} rounds × ${MS} ms; the ratio is the median of the per-round ratios (best native ÷ Chromium).`,
  '',
  `| scrypt, r = 8 | Chromium worker (hash-wasm) | OpenSSL, node:crypto (server) | OpenSSL, C, one at a time | ${laneIds.map((id) => `${id} lanes`).join(' | ')} | best native ÷ Chromium |`,
  `|---|---|---|---|${laneIds.map(() => '---|').join('')}---|`,
  ...rows.map((r) => {
    const m = (k: string) => fmt(median(r.rates[k] ?? [Number.NaN]));
    return `| N = ${r.n} (${r.n >= 1024 ? `${r.n / 1024} MiB` : `${r.n} KiB`}) | ${m('chromium')} | ${m('node-openssl')} | ${m('openssl')} | ${laneIds.map(m).join(' | ')} | ${median(r.rates.ratio!).toFixed(2)}× (rounds ${r.rates.ratio!.map((x) => x.toFixed(2)).join(', ')}) |`;
  }),
];
const first = rows[0]!;
if (first.n === DEFAULT_POW_POLICY.memoryKiB) {
  const rate = (k: string) => median(first.rates[k]!);
  md.push(
    '',
    economicsTable({
      hashesLow: expectedAttempts(difficultyForScore(0)),
      hashesHigh: expectedAttempts(difficultyForScore(100)),
      chromium: rate('chromium'),
      openssl: Math.max(rate('openssl'), rate('node-openssl')),
      lanes: Math.max(...laneIds.map(rate)),
      lanesId: laneIds.reduce((a, b) => (rate(a) >= rate(b) ? a : b)),
      serverMsPerHash: 1000 / rate('node-openssl'),
    }),
  );
}
process.stdout.write(`${md.join('\n')}\n`);

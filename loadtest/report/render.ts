import { type Caption, type Chart, groupedBars, labelledBars } from './charts.ts';
import type {
  ApiBench,
  ApiCase,
  Flow,
  ImageBench,
  K6Summary,
  PowBench,
  ReportData,
  Server,
  Step,
} from './data.ts';
import { machineLine } from './machine.ts';

/**
 * Turns a report's data into Markdown and charts. Pure: the same data always gives the same text, so a
 * report can be rendered again from its saved JSON (`npm run bench:report -- --from FILE`).
 */

export interface Rendered {
  markdown: string;
  charts: Chart[];
}

const SERVER_NAMES: Record<Server, string> = {
  koa: 'bare Koa',
  gatehouse: 'Gatehouse',
  cap: 'Cap (@cap.js/server)',
  altcha: 'ALTCHA (altcha-lib)',
};
const SERVER_ORDER = Object.values(SERVER_NAMES);

const num = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const orDash = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || !Number.isFinite(n) ? '–' : num(n, digits);

/** A Markdown table with padded columns. */
export function table(head: string[], body: string[][]): string {
  const all = [head, ...body];
  const widths = head.map((_, i) => Math.max(3, ...all.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${widths.map((w, i) => (row[i] ?? '').padEnd(w)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** The line under each section's heading: the command, when it ran, and what else loaded the machine. */
function provenance(step: Step<unknown>, machine: string): string {
  return (
    `Command: \`${step.command}\`, started ${step.started.replace(/\.\d+Z$/, 'Z')}, ${num(step.seconds)} s, ` +
    `on ${machine}; load average ${step.loadBefore} before, ${step.loadAfter} after.`
  );
}

function notMeasured(title: string, step: Step<unknown> | undefined, machine: string): string[] {
  if (!step) return [`### ${title}`, '', 'Not run in this report (`--only`).'];
  return [`### ${title}`, '', provenance(step, machine), '', `**Not measured:** ${step.error ?? 'no data'}.`];
}

function image(chart: Chart, imageDir: string): string {
  return `![${chart.title}](${imageDir}/${chart.name}.svg)`;
}

function answers(c: ApiCase): string {
  if (!c.measurement) return `skipped: ${c.skipped ?? 'not run'}`;
  const parts = Object.entries(c.measurement.statuses).map(([code, count]) => `${code}×${count}`);
  if (c.measurement.errors) parts.push(`errors×${c.measurement.errors}`);
  return parts.join(' ');
}

/** Cases by flow (baseline, validate, init, submit, issue), then by server (bare Koa, ours, Cap, ALTCHA). */
function sortedCases(cases: ApiCase[]): ApiCase[] {
  const flows: Flow[] = ['baseline', 'validate', 'init', 'submit', 'issue'];
  const servers = Object.keys(SERVER_NAMES);
  return [...cases].sort(
    (a, b) =>
      flows.indexOf(a.flow) - flows.indexOf(b.flow) || servers.indexOf(a.server) - servers.indexOf(b.server),
  );
}

/** A case's name without the database it ran on: every case of the report runs on PostgreSQL. */
function label(c: ApiCase): string {
  return c.name.replace(/ \(PostgreSQL\)$/, '');
}

function cpuPerRequest(c: ApiCase): number | null {
  const cpu = c.measurement?.cpu;
  if (!cpu || cpu.server === null) return null;
  return cpu.server + (cpu.postgres ?? 0) + (cpu.redis ?? 0);
}

function apiSection(step: Step<ApiBench>, machine: string, imageDir: string, charts: Chart[]): string[] {
  const { cases, run } = step.data!;
  // The baseline every ratio divides by: the first measured bare Koa case.
  const koaCase = cases.find((c) => c.server === 'koa' && c.measurement);
  const koa = koaCase?.measurement;
  const caption = (title: string): Caption => ({ title, command: step.command, machine });
  const sorted = sortedCases(cases);

  const rows = sorted.map((c) => [
    c.name,
    c.measurement ? num(c.measurement.reqPerSec) : '–',
    c.pacedPerSec !== undefined
      ? `paced at ${num(c.pacedPerSec)}/s`
      : c.measurement && koa
        ? `${num(c.measurement.reqPerSec / koa.reqPerSec, 2)}×`
        : '–',
    c.measurement ? num(c.measurement.p50, 1) : '–',
    c.measurement ? num(c.measurement.p99, 1) : '–',
    c.measurement ? `${orDash(c.measurement.cpu.server)} · ${orDash(c.measurement.cpu.postgres)}` : '–',
    orDash(c.measurement?.rss?.peakMiB),
    answers(c) + (c.note ? ` (${c.note})` : ''),
  ]);

  // The plots leave out replays (used tokens) and issuance: they compare the first-use path of each flow.
  const plotted = sorted.filter(
    (c) => c.measurement && c.flow !== 'issue' && !/\b(used|replayed)\b/.test(c.name),
  );
  // A paced case's requests a second are the pace the bench set (the bystander, the image rate), not a
  // capacity: it has no place among throughputs, and its CPU may count another case's load (the flood).
  const flatOut = plotted.filter((c) => c.pacedPerSec === undefined);
  const bars = (value: (c: ApiCase) => number) =>
    flatOut.map((c) => ({ label: label(c), group: SERVER_NAMES[c.server], value: value(c) }));
  const throughput = labelledBars(
    'api-throughput',
    caption('Requests per second, one server process on PostgreSQL (higher is better)'),
    bars((c) => c.measurement!.reqPerSec),
    { unit: 'requests per second (log scale)', log: true, groupOrder: SERVER_ORDER },
  );
  const cpu = labelledBars(
    'api-cpu',
    caption('CPU per request: server process + PostgreSQL (lower is better)'),
    bars((c) => cpuPerRequest(c) ?? Number.NaN),
    { unit: 'µs of CPU per request (log scale)', log: true, groupOrder: SERVER_ORDER },
  );
  const latency = groupedBars(
    'api-latency',
    caption('Latency under load, p50 and p99 (lower is better)'),
    plotted.flatMap((c) => [
      { category: label(c), series: 'p50', value: Math.max(c.measurement!.p50, 0.1) },
      { category: label(c), series: 'p99', value: Math.max(c.measurement!.p99, 0.1) },
    ]),
    { unit: 'milliseconds (log scale; 0 shown as 0.1)', log: true, seriesOrder: ['p50', 'p99'] },
  );
  charts.push(throughput, cpu, latency);

  // Each of our first-use cases against bare Koa and against each peer's first-use case of the same flow.
  const ratios: string[] = [];
  for (const ours of flatOut.filter((c) => c.server === 'gatehouse')) {
    const rate = ours.measurement!.reqPerSec;
    const parts = [`${label(ours)}: ${num(rate)} req/s`];
    if (koaCase && koa) parts.push(`${num(rate / koa.reqPerSec, 2)}× ${label(koaCase)}`);
    for (const theirs of flatOut.filter(
      (c) => c.flow === ours.flow && (c.server === 'cap' || c.server === 'altcha'),
    )) {
      parts.push(`${num(rate / theirs.measurement!.reqPerSec, 2)}× ${label(theirs)}`);
    }
    ratios.push(`- ${parts.join(', ')}.`);
  }

  return [
    '### Throughput and latency: Gatehouse beside bare Koa, Cap and ALTCHA',
    '',
    provenance(step, machine),
    '',
    `PostgreSQL: ${run.postgres}. Settings: ${run.settings}.`,
    '',
    'Every server runs in its own child process of the bench and is driven by the same load generator with',
    'the same connections and duration; the peers run in the same Koa harness on the same PostgreSQL, with',
    'their state (challenges, tokens, used payloads) kept there as ours is. The "note" after each answer',
    'count says where a peer case differs from ours. Ratios are taken within this run.',
    '',
    ...ratios,
    '',
    ...(step.data!.verdict ? [step.data!.verdict, ''] : []),
    image(throughput, imageDir),
    '',
    image(cpu, imageDir),
    '',
    image(latency, imageDir),
    '',
    table(
      [
        'case',
        'req/s',
        'vs bare Koa',
        'p50 ms',
        'p99 ms',
        'CPU µs/req: server · PostgreSQL',
        'peak RSS MiB',
        'answers',
      ],
      rows,
    ),
  ];
}

function memorySection(
  api: Step<ApiBench> | undefined,
  soak: Step<K6Summary> | undefined,
  machine: string,
  imageDir: string,
  charts: Chart[],
): string[] {
  const out = ['### Memory under load', ''];
  const measured = sortedCases(api?.data?.cases ?? []).filter(
    (c) => typeof c.measurement?.rss?.peakMiB === 'number',
  );
  if (api && measured.length > 0) {
    const chart = labelledBars(
      'memory',
      { title: 'Peak resident memory of the server process during each case', command: api.command, machine },
      measured.map((c) => ({
        label: label(c),
        group: SERVER_NAMES[c.server],
        value: c.measurement!.rss!.peakMiB ?? Number.NaN,
      })),
      { unit: 'MiB (RSS, sampled every 100 ms)', groupOrder: SERVER_ORDER },
    );
    charts.push(chart);
    out.push(
      `Per case of the throughput run above (\`${api.command}\`): the server process's resident set before the`,
      'case, at its peak during the load, and after it.',
      '',
      image(chart, imageDir),
      '',
      table(
        ['case', 'before MiB', 'peak MiB', 'after MiB'],
        measured.map((c) => [
          c.name,
          orDash(c.measurement!.rss!.beforeMiB),
          orDash(c.measurement!.rss!.peakMiB),
          orDash(c.measurement!.rss!.afterMiB),
        ]),
      ),
      '',
    );
  } else {
    out.push('Per-case memory: not measured (the throughput step did not run or recorded no RSS).', '');
  }
  if (soak?.data) {
    const m = soak.data.metrics;
    const v = (metric: string, stat: string) => m[metric]?.values[stat];
    out.push(
      `Soak on the multi-region stack (k6: the full flow and validations at a steady rate while a monitor`,
      `samples every API instance's RSS and a probe's latency). ${provenance(soak, machine)}`,
      '',
      table(
        [
          'RSS MiB min · median · max',
          'RSS growth (max ÷ first)',
          'latency drift (max ÷ first, medians of 3 samples)',
          'requests',
          'failed',
        ],
        [
          [
            `${orDash(v('api_rss_mb', 'min'))} · ${orDash(v('api_rss_mb', 'med'))} · ${orDash(v('api_rss_mb', 'max'))}`,
            `${orDash(v('api_rss_growth_ratio', 'max'), 3)}×`,
            `${orDash(v('latency_drift_ratio', 'max'), 2)}×`,
            orDash(v('http_reqs', 'count')),
            `${orDash((v('http_req_failed', 'rate') ?? 0) * 100, 2)} %`,
          ],
        ],
      ),
    );
  } else {
    out.push(
      soak
        ? `Soak: **not measured**: ${soak.error ?? 'no data'}.`
        : 'Soak: not run in this report (`--only`).',
    );
  }
  return out;
}

function powSection(step: Step<PowBench>, machine: string, imageDir: string, charts: Chart[]): string[] {
  const data = step.data!;
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const fmt = (x: number) => (x >= 100 ? num(x) : x.toPrecision(3));
  const caption = (title: string): Caption => ({ title, command: step.command, machine });
  const rates = groupedBars(
    'pow-rates',
    caption('Proof-of-work hashes per CPU-second: Chromium worker, Node (WASM), native (higher is better)'),
    data.rows.flatMap((r) => [
      { category: r.c.id, series: 'Chromium Web Worker', value: median(r.browser) },
      { category: r.c.id, series: 'Node (hash-wasm)', value: median(r.node) },
      { category: r.c.id, series: 'native (best of C/Go/OpenSSL)', value: median(r.native) },
    ]),
    {
      unit: 'hashes per CPU-second (log scale)',
      log: true,
      width: 420,
      seriesOrder: ['Chromium Web Worker', 'Node (hash-wasm)', 'native (best of C/Go/OpenSSL)'],
    },
  );
  // The project is the solver's first word: Cap, ALTCHA, Gatehouse.
  const project = (id: string) => id.split(' ')[0] ?? id;
  const solves = labelledBars(
    'pow-solves',
    caption("One solve of each project's default challenge in one Chromium Web Worker (lower is better)"),
    data.peers.map((p) => ({ label: p.id, group: project(p.id), value: p.medianMs / 1000 })),
    { unit: 'CPU seconds, median (log scale)', log: true, width: 420 },
  );
  const advantage = labelledBars(
    'pow-native-advantage',
    caption('How much faster native code solves the same challenge than Chromium does (lower is better)'),
    data.peers.map((p) => ({ label: p.id, group: project(p.id), value: p.ratio })),
    { unit: 'native attempts/s ÷ Chromium attempts per CPU-second (log scale)', log: true, width: 420 },
  );
  charts.push(rates, solves, advantage);
  return [
    '### Proof-of-work: Chromium beside native code and beside the peers’ solvers',
    '',
    provenance(step, machine),
    '',
    `Chromium ${data.machine.chromium}, ${data.machine.go}; medians of ${data.machine.rounds} rounds × ` +
      `${data.machine.msPerMeasurement} ms, Chromium, Node and native measured back to back in each round. ` +
      '"native ÷ Chromium" is what an attacker with native code gains over a real browser: lower is better ' +
      'for a proof-of-work meant to cost bots what it costs people.',
    '',
    image(rates, imageDir),
    '',
    table(
      ['construction', 'Chromium hashes/s', 'Node hashes/s', 'native hashes/s (source)', 'native ÷ Chromium'],
      data.rows.map((r) => [
        r.c.id,
        fmt(median(r.browser)),
        fmt(median(r.node)),
        `${fmt(median(r.native))} (${r.sources[0] ?? '?'})`,
        `${num(median(r.ratio), 2)}×`,
      ]),
    ),
    '',
    image(solves, imageDir),
    '',
    image(advantage, imageDir),
    '',
    table(
      ['solver', 'difficulty', 'expected attempts', 'CPU s, median', 'wall s, median', 'native ÷ Chromium'],
      data.peers.map((p) => [
        p.id,
        p.difficulty,
        fmt(p.expected),
        num(p.medianMs / 1000, 2),
        num(p.medianWallMs / 1000, 2),
        `${num(p.ratio, 2)}×`,
      ]),
    ),
  ];
}

function imagesSection(step: Step<ImageBench>, machine: string, imageDir: string, charts: Chart[]): string[] {
  const data = step.data!;
  const chart = groupedBars(
    'images',
    {
      title: 'Image challenge generation, drawing and encoding (lower is better)',
      command: step.command,
      machine,
    },
    data.results.flatMap((r) => [
      { category: r.name, series: 'CPU p50', value: r.cpuMs.p50 },
      { category: r.name, series: 'CPU p99', value: r.cpuMs.p99 },
    ]),
    { unit: 'milliseconds of CPU per challenge', seriesOrder: ['CPU p50', 'CPU p99'] },
  );
  charts.push(chart);
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  return [
    '### Image challenge generation',
    '',
    provenance(step, machine),
    '',
    image(chart, imageDir),
    '',
    table(
      ['kind', 'runs', 'CPU p50 ms', 'CPU p99 ms', 'wall p50 ms', 'wall p99 ms', 'size KB, mean / max'],
      data.results.map((r) => [
        r.name,
        String(r.runs),
        num(r.cpuMs.p50, 1),
        num(r.cpuMs.p99, 1),
        num(r.wallMs.p50, 1),
        num(r.wallMs.p99, 1),
        Object.entries(r.bytes)
          .map(([name, s]) => `${name} ${kb(s.mean)} / ${kb(s.max)}`)
          .join(', '),
      ]),
    ),
  ];
}

function failoverSection(
  drills: [string, Step<K6Summary> | undefined][],
  machine: string,
  imageDir: string,
  charts: Chart[],
): string[] {
  const measured = drills.filter((d): d is [string, Step<K6Summary>] => Boolean(d[1]?.data));
  const out = ['### Failover drills', ''];
  for (const [name, step] of drills) {
    if (step && !step.data) out.push(`${name}: **not measured**: ${step.error ?? 'no data'}.`, '');
  }
  if (measured.length === 0) return out;
  const value = (s: K6Summary, metric: string, stat: string) => s.metrics[metric]?.values[stat];
  const chart = groupedBars(
    'failover',
    {
      title: 'Failover: SIGKILL → standby serving, restart → main API serving again (lower is better)',
      command: measured.map(([, s]) => s.command).join(' ; '),
      machine,
    },
    measured.flatMap(([name, s]) => [
      { category: name, series: 'switch over', value: value(s.data!, 'switch_over_ms', 'max') ?? Number.NaN },
      { category: name, series: 'switch back', value: value(s.data!, 'switch_back_ms', 'max') ?? Number.NaN },
    ]),
    { unit: 'milliseconds', seriesOrder: ['switch over', 'switch back'] },
  );
  charts.push(chart);
  out.push(
    'k6 on the local multi-region stack (2 regions × 2 API instances, both standby roles per region, shared',
    'PostgreSQL and Redis): end users verify at a steady rate following the SDKs’ continuity rules while a',
    'controller SIGKILLs the main API (one region, then every region) and restarts it. Short forms; the full',
    'forms are in loadtest/README.md.',
    '',
    ...measured.map(([name, s]) => `- ${name}: ${provenance(s, machine)}`),
    '',
    image(chart, imageDir),
    '',
    table(
      [
        'drill',
        'switch over ms',
        'switch back ms',
        'verification p99 ms: steady · switching',
        'verifications',
        'failed',
        'accepted twice',
        'offline_ accepted',
      ],
      measured.map(([name, s]) => {
        const d = s.data!;
        return [
          name,
          orDash(value(d, 'switch_over_ms', 'max')),
          orDash(value(d, 'switch_back_ms', 'max')),
          `${orDash(value(d, 'verification_ms{phase:steady}', 'p(99)'))} · ${orDash(value(d, 'verification_ms{phase:switching}', 'p(99)'))}`,
          orDash(value(d, 'iterations', 'count')),
          orDash(value(d, 'failed_verifications', 'count') ?? 0),
          orDash(value(d, 'tokens_accepted_twice', 'count') ?? 0),
          orDash(value(d, 'offline_tokens_accepted', 'count') ?? 0),
        ];
      }),
    ),
  );
  return out;
}

/** The whole generated block of docs/benchmarks.md; images are referenced under `imageDir`. */
export function render(data: ReportData, imageDir: string): Rendered {
  const charts: Chart[] = [];
  const machine = machineLine(data.machine);
  const { api, pow, images, soak, failoverOne, failoverAll } = data.steps;
  const tools = Object.entries(data.machine.tools)
    .map(([name, v]) => `${name}: ${v}`)
    .join('; ');
  const lines = [
    `Written by \`${data.command}\` on ${data.date.replace(/\.\d+Z$/, 'Z')}. Every step below ran in that`,
    'one invocation, one after the other (never two at once), on this machine:',
    '',
    `- Machine: ${machine}. Other work may share it: each section gives the load average around its step.`,
    `- Tools: ${tools || 'none found'}.`,
    '',
    ...(api?.data
      ? apiSection(api, machine, imageDir, charts)
      : notMeasured('Throughput and latency', api, machine)),
    '',
    ...memorySection(api?.data ? api : undefined, soak, machine, imageDir, charts),
    '',
    ...(pow?.data ? powSection(pow, machine, imageDir, charts) : notMeasured('Proof-of-work', pow, machine)),
    '',
    ...(images?.data
      ? imagesSection(images, machine, imageDir, charts)
      : notMeasured('Image generation', images, machine)),
    '',
    ...failoverSection(
      [
        ['one region', failoverOne],
        ['every region', failoverAll],
      ],
      machine,
      imageDir,
      charts,
    ),
  ];
  return { markdown: `${lines.join('\n').trim()}\n`, charts };
}

/** Whether any step that was asked for failed: the report is still written, and the command fails. */
export function failedSteps(data: ReportData): string[] {
  return Object.entries(data.steps)
    .filter(([, step]) => step && !step.data)
    .map(([name, step]) => `${name}: ${step?.error ?? 'no data'}`);
}

const BEGIN = '<!-- bench:report:begin (written by `npm run bench:report`; edit outside these markers) -->';
const END = '<!-- bench:report:end -->';

/** `text` with `block` between the report markers, or in a new "Report" section after the title. */
export function placeBlock(text: string, block: string): string {
  const generated = `${BEGIN}\n${block.trim()}\n${END}`;
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start >= 0 && end > start) return text.slice(0, start) + generated + text.slice(end + END.length);
  const title = /^# .*\n/m.exec(text);
  const at = title ? title.index + title[0].length : 0;
  return `${text.slice(0, at)}\n## Report\n\n${generated}\n${text.slice(at)}`;
}

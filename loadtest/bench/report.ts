import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Measurement } from './load.ts';
import type { Outcomes } from './protocol.ts';

/** What a case measures: a baseline, or one of the flows every CAPTCHA has an equivalent of. */
export type Flow = 'baseline' | 'validate' | 'init' | 'submit' | 'issue';
/** Whose server answers: ours, a bare Koa app, or a peer in peer-child.ts. */
export type Server = 'gatehouse' | 'koa' | 'cap' | 'altcha';

/** Where a case sits: its group (the database label, or `bare Koa`), its flow and its server. */
export interface CaseMeta {
  name: string;
  group: string;
  flow: Flow;
  server: Server;
  /**
   * Sent at this fixed rate (requests a second), not flat out: its req/s is the pace the bench set, not
   * what the server can do, so no throughput ratio is taken of it; its CPU and latency are what it measures.
   */
  pacedPerSec?: number;
}

export interface CaseResult extends CaseMeta {
  /** Why the case was not run, when it was not. */
  skipped?: string;
  note?: string;
  m?: Measurement;
  /** Peer cases: answers the peer accepted and rejected during the measured run, as it counted them. */
  outcomes?: Outcomes;
}

const FLOW_ORDER: Flow[] = ['baseline', 'init', 'submit', 'validate', 'issue'];

/**
 * The results with each group's rows ordered by flow (a user's way through: init, submit, then the
 * integrator's validate), so that ours and the peers' sit together; groups and ties keep their order.
 */
export function byFlow(results: CaseResult[]): CaseResult[] {
  const groups = [...new Set(results.map((r) => r.group))];
  return groups.flatMap((group) =>
    results
      .filter((r) => r.group === group)
      .map((r, i) => ({ r, i }))
      .sort((a, b) => FLOW_ORDER.indexOf(a.r.flow) - FLOW_ORDER.indexOf(b.r.flow) || a.i - b.i)
      .map(({ r }) => r),
  );
}

export interface RunInfo {
  command: string;
  date: string;
  machine: string;
  node: string;
  postgres: string;
  settings: string;
}

const num = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function statuses(m: Measurement): string {
  const parts = Object.entries(m.statuses).map(([code, count]) => `${code}×${count}`);
  if (m.errors) parts.push(`errors×${m.errors}`);
  return parts.join(' ');
}

function cpu(m: Measurement): string {
  const c = m.cpu;
  const f = (v: number | null) => (v === null ? '–' : num(v));
  // The API alone beside the figure with its renderers, where they did a share of the work (image inits):
  // what the request path itself costs, whatever drawing costs.
  const own =
    c.server !== null && c.serverOwn != null && c.server - c.serverOwn > 0.05 * c.server
      ? ` (API ${num(c.serverOwn)})`
      : '';
  return `${f(c.server)}${own} · ${f(c.postgres)} · ${f(c.redis)} · ${f(c.loadgen)}`;
}

/**
 * What the server side could answer if it had this machine to itself, from its CPU cost per request:
 * one core for the single-threaded Node process, all cores for it together with PostgreSQL and Redis.
 */
export function ceiling(m: Measurement, cores: number): number | null {
  const { server, postgres, redis } = m.cpu;
  if (!server) return null;
  return Math.min(1e6 / server, (cores * 1e6) / (server + (postgres ?? 0) + (redis ?? 0)));
}

/** Rows of the result table: figures, ratios to the baseline, statuses, CPU per request. */
export function rows(results: CaseResult[], cores: number): string[][] {
  const base = results[0]?.m;
  const baseCeiling = base ? ceiling(base, cores) : null;
  return results.map((r) => {
    if (!r.m) {
      const skipped = `skipped: ${r.skipped ?? 'not run'}`;
      return HEADER.map((column, i) => (i === 0 ? r.name : column === 'responses' ? skipped : '–'));
    }
    const ratio =
      r.pacedPerSec !== undefined
        ? `paced at ${num(r.pacedPerSec)}/s`
        : base
          ? `${num(r.m.reqPerSec / base.reqPerSec, 2)}×`
          : '–';
    const ok = Object.entries(r.m.statuses)
      .filter(([code]) => code.startsWith('2'))
      .reduce((sum, [, count]) => sum + count, 0);
    const top = ceiling(r.m, cores);
    const topText =
      top === null ? '–' : `${num(top)}${baseCeiling ? ` (${num(top / baseCeiling, 2)}×)` : ''}`;
    return [
      r.name,
      num(r.m.reqPerSec),
      ratio,
      num(ok / Math.max(1, r.m.seconds)),
      num(r.m.p50, 1),
      num(r.m.p99, 1),
      r.m.rss.peakMiB === null
        ? '–'
        : num(r.m.rss.peakMiB) + (r.m.rss.childrenPeakMiB ? ` (+${num(r.m.rss.childrenPeakMiB)})` : ''),
      statuses(r.m) + (r.note ? ` (${r.note})` : ''),
      cpu(r.m),
      r.m.loopBusy === undefined ? '–' : `${num(r.m.loopBusy * 100)} %`,
      topText,
    ];
  });
}

export const HEADER = [
  'case',
  'req/s',
  'vs bare Koa',
  '2xx/s',
  'p50 ms',
  'p99 ms',
  'peak RSS MiB (+ its renderers)',
  'responses',
  'CPU µs/req: server with its renderers (API alone) · PostgreSQL · Redis · load generator',
  'server event loop busy',
  'CPU ceiling req/s (vs Koa)',
];

export function printTable(table: string[][]): void {
  const all = [HEADER, ...table];
  const widths = HEADER.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  console.log(`\n${line(HEADER)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of table) console.log(line(row));
}

/** A Markdown table with padded columns, as `biome format` lays them out. */
export function markdownTable(table: string[][]): string {
  const all = [HEADER, ...table];
  const widths = HEADER.map((_, i) => Math.max(3, ...all.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(HEADER), line(widths.map((w) => '-'.repeat(w))), ...table.map(line)].join('\n');
}

const BEGIN = '<!-- bench:foundation:begin (written by `npm run bench`; edit outside these markers) -->';
const END = '<!-- bench:foundation:end -->';

/**
 * Writes the generated block into docs/benchmarks.md, inside the "Foundation" section's markers; creates
 * the section (and the file) when absent. Text outside the markers is left alone.
 */
export function writeDocs(file: string, block: string): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const generated = `${BEGIN}\n${block.trim()}\n${END}`;
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  let next: string;
  if (start >= 0 && end > start) {
    next = text.slice(0, start) + generated + text.slice(end + END.length);
  } else if (/^## Foundation$/m.test(text)) {
    next = text.replace(/^## Foundation\n/m, `## Foundation\n\n${generated}\n`);
  } else {
    next = `${text.trimEnd()}\n\n## Foundation\n\n${generated}\n`;
  }
  writeFileSync(file, next);
}

export function describeRun(info: RunInfo, table: string[][], verdict: string, profiles: string): string {
  return [
    `Command: \`${info.command}\`, ${info.date}.`,
    '',
    `Machine: ${info.machine}; ${info.node}.`,
    `PostgreSQL: ${info.postgres}.`,
    `Settings: ${info.settings}.`,
    '',
    markdownTable(table),
    '',
    verdict,
    profiles ? `\n${profiles}` : '',
  ].join('\n');
}

/** The JSON `--json` writes: the run and every case with its full measurement. */
export interface BenchJson {
  run: RunInfo & { options: Record<string, string | number | boolean> };
  cases: (CaseMeta & {
    note?: string;
    skipped?: string;
    outcomes?: Outcomes;
    measurement?: Measurement;
  })[];
  verdict: string;
}

export function writeJson(
  file: string,
  run: BenchJson['run'],
  results: CaseResult[],
  verdict: string,
): BenchJson {
  const json: BenchJson = {
    run,
    cases: results.map(({ m, ...rest }) => ({ ...rest, ...(m ? { measurement: m } : {}) })),
    verdict,
  };
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  return json;
}

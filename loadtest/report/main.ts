import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { toSvg } from './charts.ts';
import type { ReportData } from './data.ts';
import { describeMachine } from './machine.ts';
import { failedSteps, placeBlock, render } from './render.ts';
import { runStep, stepSpecs } from './steps.ts';

/**
 * `npm run bench:report`: runs every benchmark of the project one after the other and writes the report
 * into docs/benchmarks.md (between its report markers), the plots into docs/benchmarks/*.svg and the raw
 * figures into docs/benchmarks/report.json.
 *
 *   --quick         short runs (2 s per throughput case, one proof-of-work round, 30 images): to try it
 *   --only a,b      only these steps: api, pow, images, soak, failoverOne, failoverAll
 *   --from FILE     no benchmark: render the report again from a saved report.json
 *   --out FILE      the Markdown file (docs/benchmarks.md)
 *
 * Needs PostgreSQL and Redis on 127.0.0.1 (`bash .ci/run` starts them), Chromium (the PoW step) and k6
 * (`bash .ci/tools.sh k6`) for the drills. A step that cannot run is reported as not measured, the rest
 * still runs, and the command exits 1.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const IMAGE_DIR = 'benchmarks';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    from: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'docs/benchmarks.md') },
  },
});

async function measure(): Promise<ReportData> {
  const node = process.execPath;
  const k6 = process.env.K6 ?? join(process.env.GATEHOUSE_TOOLS_DIR ?? join(ROOT, '.cache/tools'), 'bin/k6');
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-report-'));
  const specs = stepSpecs({ root: ROOT, node, k6, scratch, quick: flags.quick ?? false });
  const only = flags.only?.split(',').map((s) => s.trim());
  for (const name of only ?? []) {
    if (!(name in specs))
      throw new Error(`--only: no step "${name}" (steps: ${Object.keys(specs).join(', ')})`);
  }
  const args = process.argv.slice(2);
  const data: ReportData = {
    version: 1,
    command: `npm run bench:report${args.length ? ` -- ${args.join(' ')}` : ''}`,
    date: new Date().toISOString(),
    machine: describeMachine(k6),
    steps: {},
  };
  try {
    for (const [name, spec] of Object.entries(specs)) {
      if (only && !only.includes(name)) continue;
      if (spec.needsK6 && !existsSync(k6)) {
        data.steps[name as keyof ReportData['steps']] = {
          command: spec.command,
          started: new Date().toISOString(),
          seconds: 0,
          loadBefore: '–',
          loadAfter: '–',
          error: `k6 not found at ${k6} (build it: \`bash .ci/tools.sh k6\`)`,
        };
        continue;
      }
      // Each step's JSON is typed where the report reads it (data.ts); here it is only carried along.
      data.steps[name as keyof ReportData['steps']] = await runStep<never>(ROOT, spec);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return data;
}

const data: ReportData = flags.from
  ? (JSON.parse(readFileSync(flags.from, 'utf8')) as ReportData)
  : await measure();
const out = resolve(flags.out!);
const images = join(resolve(out, '..'), IMAGE_DIR);
mkdirSync(images, { recursive: true });
if (!flags.from) writeFileSync(join(images, 'report.json'), `${JSON.stringify(data, null, 2)}\n`);
const { markdown, charts } = render(data, IMAGE_DIR);
for (const chart of charts) writeFileSync(join(images, `${chart.name}.svg`), await toSvg(chart));
writeFileSync(out, placeBlock(existsSync(out) ? readFileSync(out, 'utf8') : '# Benchmarks\n', markdown));
console.log(`\nwrote ${out}, ${charts.length} plots and the raw figures in ${images}`);
const failed = failedSteps(data);
if (failed.length > 0) {
  console.error(`\nNot measured:\n${failed.map((f) => `  - ${f}`).join('\n')}`);
  process.exitCode = 1;
}

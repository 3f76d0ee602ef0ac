/**
 * The adversarial benchmark, long form (npm run bench:adversarial): every solver of the ladder against the
 * real widget in Chromium and a real API, then a Markdown table of pass rates per solver and challenge
 * type written into docs/adversarial.md between `<!-- adversarial:<label>:start/end -->` markers.
 *
 *   npm run bench:adversarial -- [--n 40] [--control-n 60] [--only id,id] [--label current] [--concurrency 2]
 *
 * Needs Chromium (/usr/bin/chromium or CHROMIUM_PATH); runs on the embedded database. Each attempt comes
 * from its own address (X-Forwarded-For behind TRUSTED_PROXIES=loopback), except the escalation row's, which share one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { type Cell, runCells, SOLVERS, startHarness, table } from './harness.ts';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '40' },
    'control-n': { type: 'string', default: '60' },
    only: { type: 'string' },
    label: { type: 'string', default: 'current' },
    concurrency: { type: 'string', default: '2' },
    doc: { type: 'string', default: 'docs/adversarial.md' },
  },
});
const only = values.only?.split(',');
const solvers = SOLVERS.filter((s) => !only || only.includes(s.id));
const n = Number(values.n);
const controlN = Number(values['control-n']);

const harness = await startHarness();
const started = Date.now();
let cells: Cell[];
try {
  cells = await runCells(harness, solvers, (s) => (s.role === 'control' ? controlN : n), {
    concurrency: Number(values.concurrency),
    seed: values.label,
    onCell: (c) => {
      const ok = c.attempts.filter((a) => a.passed).length;
      const broken = c.attempts.filter((a) => a.error);
      console.log(
        `${c.solver.kind.padEnd(6)} ${c.solver.id.padEnd(18)} ${ok}/${c.attempts.length - broken.length}${broken.length ? ` broken ${broken.length}: ${broken[0]?.error}` : ''} refused ${c.attempts.filter((a) => a.refused).length} hard ${c.attempts.filter((a) => a.tier === 'hard').length}`,
      );
    },
  });
} finally {
  await harness.close();
}
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const md = `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`npm run bench:adversarial -- ${process.argv.slice(2).join(' ')}\` (${minutes} min, ${cpus().length} CPUs shared with other work, load average ${loadavg()[0]?.toFixed(1)}; commit under test: the working tree).\n\n${table(cells)}`;
console.log(`\n${md}`);
const start = `<!-- adversarial:${values.label}:start -->`;
const end = `<!-- adversarial:${values.label}:end -->`;
let doc = '';
try {
  doc = readFileSync(values.doc, 'utf8');
} catch {}
const block = `${start}\n${md}\n${end}`;
doc = doc.includes(start) ? doc.replace(new RegExp(`${start}[\\s\\S]*?${end}`), block) : `${doc}\n${block}\n`;
writeFileSync(values.doc, doc);
process.exit(0); // the embedded database and the image workers keep handles open

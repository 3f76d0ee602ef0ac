/**
 * Image challenge benchmark and example writer.
 *
 *   taskset -c 0 npx node loadtest/bench/images.ts [--runs 200] [--write-docs] [--save-examples] [--json FILE]
 *
 * Times generation (drawing and encoding, as the API pays it) per kind over `--runs` challenges drawn
 * with the crypto random source, one at a time, and reports p50/p99 and encoded sizes. CPU time (all of
 * the process's threads, encoding included) is the figure to trust on a shared machine; wall time also
 * counts waiting for the core. `--write-docs`
 * replaces the table between the bench markers in docs/challenges.md; `--save-examples` writes one PNG
 * per kind into docs/images/, composed as the widget shows them; `--json` writes the figures for the
 * benchmark report (`npm run bench:report`).
 */
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import {
  type Challenge,
  type ChallengeKind,
  type Detail,
  generateChallenge,
  type ImageFormat,
  seededRandom,
} from '../../core/src/challenges/index.ts';

const root = new URL('../../', import.meta.url);
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    'write-docs': { type: 'boolean', default: false },
    'save-examples': { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});

interface Case {
  name: string;
  kind: ChallengeKind;
  detail: Detail;
  format: ImageFormat;
}
const CASES: Case[] = [
  // The first four as the API and the standby serve them (JPEG, the slide's piece as lossless WebP).
  { name: 'slide', kind: 'slide', detail: 'full', format: 'jpeg' },
  { name: 'slide (standby, simple)', kind: 'slide', detail: 'simple', format: 'jpeg' },
  { name: 'click', kind: 'click', detail: 'full', format: 'jpeg' },
  { name: 'select', kind: 'select', detail: 'full', format: 'jpeg' },
  { name: 'slide as WebP', kind: 'slide', detail: 'full', format: 'webp' },
  { name: 'click as WebP', kind: 'click', detail: 'full', format: 'webp' },
  { name: 'select as WebP', kind: 'select', detail: 'full', format: 'webp' },
  { name: 'slide as PNG', kind: 'slide', detail: 'full', format: 'png' },
  { name: 'click as PNG', kind: 'click', detail: 'full', format: 'png' },
  { name: 'select as PNG', kind: 'select', detail: 'full', format: 'png' },
];

/** Every encoded image of a challenge's view, named. */
function images(c: Challenge): Array<[string, Buffer]> {
  if (c.kind === 'slide')
    return [
      ['background', c.view.background.data],
      ['piece', c.view.piece.data],
    ];
  if (c.kind === 'click')
    return [
      ['image', c.view.image.data],
      ['prompt', c.view.promptImage.data],
    ];
  return [['grid', c.view.image.data]];
}

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

/** One kind's figures: milliseconds (CPU of every thread, and wall) and encoded sizes in bytes. */
export interface ImageResult {
  name: string;
  kind: ChallengeKind;
  format: ImageFormat;
  runs: number;
  cpuMs: { p50: number; p99: number };
  wallMs: { p50: number; p99: number };
  bytes: Record<string, { mean: number; max: number }>;
}

async function bench(c: Case, runs: number): Promise<ImageResult> {
  const options = { detail: c.detail, format: c.format };
  for (let i = 0; i < 5; i++) await generateChallenge(c.kind, options); // warm-up: JIT and codec setup
  const times: number[] = [];
  const cpu: number[] = [];
  const sizes = new Map<string, number[]>();
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const startCpu = process.cpuUsage();
    const ch = await generateChallenge(c.kind, options);
    const used = process.cpuUsage(startCpu);
    times.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
    for (const [name, data] of images(ch)) sizes.set(name, [...(sizes.get(name) ?? []), data.length]);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return {
    name: c.name,
    kind: c.kind,
    format: c.format,
    runs,
    cpuMs: { p50: quantile(cpu, 0.5), p99: quantile(cpu, 0.99) },
    wallMs: { p50: quantile(times, 0.5), p99: quantile(times, 0.99) },
    bytes: Object.fromEntries(
      [...sizes].map(([name, s]) => [
        name,
        { mean: s.reduce((a, b) => a + b, 0) / s.length, max: Math.max(...s) },
      ]),
    ),
  };
}

function row(r: ImageResult): string {
  const sizeText = Object.entries(r.bytes)
    .map(([name, s]) => `${name} ${kb(s.mean)} / ${kb(s.max)}`)
    .join(', ');
  const f = (ms: number) => ms.toFixed(1);
  return `| ${r.name} | ${f(r.cpuMs.p50)} | ${f(r.cpuMs.p99)} | ${f(r.wallMs.p50)} | ${f(r.wallMs.p99)} | ${sizeText} |`;
}

/** Composes a challenge's images as the widget lays them out, for the docs. */
async function compose(c: Challenge): Promise<Buffer> {
  if (c.kind === 'slide') {
    const [bg, piece] = await Promise.all([loadImage(c.view.background.data), loadImage(c.view.piece.data)]);
    const out = createCanvas(bg.width, bg.height);
    const ctx = out.getContext('2d');
    ctx.drawImage(bg, 0, 0);
    ctx.drawImage(piece, 0, c.view.pieceY); // the piece at rest, on the left
    return out.encode('png');
  }
  if (c.kind === 'click') {
    const [img, prompt] = await Promise.all([
      loadImage(c.view.image.data),
      loadImage(c.view.promptImage.data),
    ]);
    const out = createCanvas(img.width, img.height + prompt.height + 8);
    const ctx = out.getContext('2d');
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.drawImage(img, 0, 0);
    ctx.drawImage(prompt, 0, img.height + 8);
    return out.encode('png');
  }
  const grid = await loadImage(c.view.image.data);
  const out = createCanvas(grid.width, grid.height);
  out.getContext('2d').drawImage(grid, 0, 0);
  return out.encode('png');
}

if (values['save-examples']) {
  const examples = [
    ['slide', 'slide', 'full'],
    ['click', 'click', 'full'],
    ['select', 'select', 'full'],
    ['slide-simple', 'slide', 'simple'],
  ] as const;
  for (const [name, kind, detail] of examples) {
    // Fixed seeds, so the committed examples are reproducible.
    const c = await generateChallenge(kind, { detail, rng: seededRandom(`docs-example-${name}`) });
    const path = new URL(`docs/images/challenge-${name}.png`, root);
    writeFileSync(path, await compose(c));
    console.log(`wrote ${path.pathname} (${c.view.prompt.key} ${JSON.stringify(c.view.prompt.params)})`);
  }
}

const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 0) throw new Error(`--runs must be a whole number, got ${values.runs}`);
if (runs === 0) process.exit(0); // examples only
const header = [
  '| kind | CPU p50 ms | CPU p99 ms | wall p50 ms | wall p99 ms | size KB: mean / max |',
  '|---|---:|---:|---:|---:|---|',
];
const results: ImageResult[] = [];
for (const c of CASES) {
  results.push(await bench(c, c.format === 'jpeg' ? runs : Math.min(runs, 50)));
  console.log(row(results[results.length - 1]!));
}
const table = [...header, ...results.map(row)].join('\n');
const note =
  `Measured ${new Date().toISOString().slice(0, 10)} with \`taskset -c 0 npx node loadtest/bench/images.ts --runs ${runs}\` ` +
  `(${runs} runs per row served as is, ${Math.min(runs, 50)} per WebP and PNG row; Node ${process.version}; ` +
  `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores shared with other work, pinned to one; ` +
  `load average ${loadavg()[0]?.toFixed(1)} at the end).`;
console.log(`\n${note}\n\n${table}`);

if (values.json) {
  const machine = { cpu: cpus()[0]?.model ?? 'unknown CPU', cores: cpus().length, node: process.version };
  writeFileSync(
    values.json,
    JSON.stringify({ date: new Date().toISOString(), runs, machine, results }, null, 2),
  );
}

if (values['write-docs']) {
  const docs = new URL('docs/challenges.md', root);
  const text = await readFile(docs, 'utf8');
  const start = '<!-- bench:start -->';
  const end = '<!-- bench:end -->';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error('docs/challenges.md lacks the bench markers');
  writeFileSync(docs, `${text.slice(0, from + start.length)}\n${note}\n\n${table}\n${text.slice(to)}`);
  // The repository lints Markdown too: let biome lay out the new table.
  console.log('updated docs/challenges.md');
}

/**
 * The widget's real transfer size beside its peers' widgets, measured in one run: builds the widget
 * (minified), then gzips (level 9) and brotli-compresses (quality 11) every file.
 *
 *   node sdk/web/size.ts          prints the table; exits 1 when the loader breaks its budget
 *   node sdk/web/size.ts --json   the same figures as JSON
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { buildWidget } from './build.ts';

/** The loader's budget, gzipped. */
export const LOADER_BUDGET_BYTES = 15 * 1024;

export interface Measured {
  name: string;
  /** When a page downloads it. */
  when: string;
  raw: number;
  gzip: number;
  brotli: number;
}

export function measure(name: string, when: string, body: Buffer): Measured {
  return {
    name,
    when,
    raw: body.length,
    gzip: gzipSync(body, { level: 9 }).length,
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
}

/** Builds the widget into a scratch folder and measures its three files. */
export async function measureWidget(): Promise<Measured[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-size-'));
  try {
    const built = await buildWidget({ outDir: dir, minify: true });
    return [
      measure('gatehouse.js (loader)', 'every page', readFileSync(built.loader.path)),
      measure(built.ui.file, 'image challenges only', readFileSync(built.ui.path)),
      measure(built.worker.file, 'proof-of-work only', readFileSync(built.worker.path)),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A package's folder in the nearest node_modules (package.json is not always in its exports). */
function packageRoot(pkg: string): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', pkg, 'package.json'))) return join(dir, 'node_modules', pkg);
    if (dirname(dir) === dir) return undefined;
  }
}

/** Peers' widget files, from node_modules (missing packages are skipped with a note). */
export function measurePeers(): { measured: Measured[]; missing: string[] } {
  const peers: Array<[pkg: string, file: string, name: string, when: string]> = [
    [
      'altcha',
      'dist/main/altcha.min.js',
      'altcha widget (altcha.min.js)',
      'every page (SHA/PBKDF2 workers inlined)',
    ],
    ['altcha', 'dist/main/altcha.i18n.min.js', 'altcha widget + all languages', 'every page'],
    ['altcha', 'dist/workers/argon2id.js', 'altcha Argon2id worker', 'self-hosted worker build'],
    ['@cap.js/widget', 'cap.min.js', 'Cap widget (cap.min.js)', 'every page'],
    ['@cap.js/widget', 'wasm-hashes.min.js', 'Cap WASM hashes', 'on solve'],
  ];
  const measured: Measured[] = [];
  const missing: string[] = [];
  for (const [pkg, file, name, when] of peers) {
    const root = packageRoot(pkg);
    if (!root) {
      missing.push(pkg);
      continue;
    }
    const path = join(root, file);
    if (existsSync(path)) {
      const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
      measured.push(measure(`${name} ${version}`, when, readFileSync(path)));
    } else missing.push(`${pkg}/${file}`);
  }
  return { measured, missing: [...new Set(missing)] };
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

function table(rows: Measured[]): string {
  const lines = rows.map((r) => [r.name, r.when, kb(r.raw), kb(r.gzip), kb(r.brotli)]);
  const head = ['file', 'downloaded', 'minified', 'gzip -9', 'brotli 11'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ours = await measureWidget();
  const peers = measurePeers();
  const loader = ours[0] as Measured;
  const ok = loader.gzip <= LOADER_BUDGET_BYTES;
  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify(
        { widget: ours, peers: peers.measured, missing: peers.missing, budget: LOADER_BUDGET_BYTES, ok },
        null,
        2,
      ),
    );
  } else {
    console.log('Gatehouse widget\n');
    console.log(table(ours));
    const [, ui, worker] = ours as [Measured, Measured, Measured];
    console.log(
      `\nloader ${loader.gzip} B gzipped: ${ok ? 'within' : 'OVER'} the ${LOADER_BUDGET_BYTES} B budget` +
        ` · invisible path ${kb(loader.gzip + worker.gzip)} · image path ${kb(loader.gzip + ui.gzip)} (gzip)`,
    );
    console.log('\nPeers (from node_modules)\n');
    console.log(table(peers.measured));
    if (peers.missing.length) console.log(`\nnot installed: ${peers.missing.join(', ')}`);
  }
  if (!ok) process.exitCode = 1;
}

/**
 * The SIMD attacker (native/simd/scrypt-lanes.c): built for AVX2 and, where the CPU has it, AVX-512, and
 * checked against the server's verifier before any figure is taken from it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nativeHasher } from '../../../core/src/pow/native.ts';
import { type Puzzle, parsePuzzle } from '../../../core/src/pow/puzzle.ts';
import { spotCheckSolution, verifySolution } from '../../../core/src/pow/verify.ts';
import { cacheDir } from './build.ts';
import type { Rate } from './candidates.ts';

const here = dirname(fileURLToPath(import.meta.url));
const SOURCE = join(here, 'native/simd/scrypt-lanes.c');

export type LaneBin = { id: string; path: string; lanes: number };

const flags = () => readFileSync('/proc/cpuinfo', 'utf8');

/** Builds one binary per instruction set the CPU has (gcc and OpenSSL's headers, libssl-dev, are needed). */
export function buildLanes(): LaneBin[] {
  const cpu = flags();
  const avx512 = / avx512f /.test(cpu) && / avx512vl /.test(cpu);
  const sets = [
    // 128-bit registers, 4 lanes: the most that WebAssembly SIMD can express, run natively.
    { id: 'sse-128', march: 'x86-64-v2', lanes: 4, has: / sse4_1 /.test(cpu) },
    { id: 'avx2', march: 'x86-64-v3', lanes: 8, has: / avx2 /.test(cpu) },
    { id: 'avx512', march: 'x86-64-v4', lanes: 16, has: avx512 },
    { id: 'avx512-ymm', march: 'x86-64-v4', lanes: 8, has: avx512 },
  ];
  const out: LaneBin[] = [];
  for (const set of sets.filter((s) => s.has)) {
    const path = join(cacheDir, `scrypt-lanes-${set.id}`);
    execFileSync(
      'cc',
      ['-O3', `-march=${set.march}`, `-DLANES=${set.lanes}`, '-o', path, SOURCE, '-lcrypto'],
      {
        stdio: 'inherit',
      },
    );
    out.push({ id: set.id, path, lanes: set.lanes });
  }
  const openssl = join(cacheDir, 'scrypt-lanes-generic');
  execFileSync('cc', ['-O3', '-o', openssl, SOURCE, '-lcrypto'], { stdio: 'inherit' });
  out.push({ id: 'openssl', path: openssl, lanes: 1 });
  return out;
}

/** Hashes per CPU-second of `bin` for scrypt N (r = 8), lanes or OpenSSL one at a time, over about `ms`. */
export function laneRate(bin: LaneBin, n: number, ms: number): Rate {
  const mode = bin.id === 'openssl' ? 'openssl' : 'lanes';
  return JSON.parse(execFileSync(bin.path, ['bench', String(n), String(ms), mode], { encoding: 'utf8' }));
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/**
 * Proves a binary computes the server's function: 64 nonces hashed by it equal nativeHasher's (OpenSSL in
 * Node, the verifier the API uses), and a puzzle it solves passes the server's checks.
 */
export async function checkAgainstServer(bin: LaneBin, puzzle: Puzzle): Promise<void> {
  const parsed = parsePuzzle(puzzle);
  const hasher = nativeHasher();
  if (!parsed || !hasher) throw new Error('a well-formed puzzle and node:crypto scrypt are needed');
  const mode = bin.id === 'openssl' ? 'openssl' : 'lanes';
  const lines = execFileSync(
    bin.path,
    ['hash', String(puzzle.memoryKiB), hex(parsed.salt), '1000', '64', mode],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');
  if (lines.length !== 64) throw new Error(`${bin.id}: ${lines.length} hashes instead of 64`);
  for (const line of lines) {
    const [nonce, hash] = line.split(' ');
    const password = new Uint8Array(4);
    new DataView(password.buffer).setUint32(0, Number(nonce), false);
    const server = hex(await hasher(password, parsed.salt, puzzle));
    if (server !== hash)
      throw new Error(`${bin.id}: nonce ${nonce} hashes to ${hash}, the server's ${server}`);
  }
  if (mode === 'openssl') return;
  const solved = JSON.parse(
    execFileSync(
      bin.path,
      ['solve', String(puzzle.memoryKiB), hex(parsed.salt), String(puzzle.target), String(puzzle.count)],
      { encoding: 'utf8' },
    ),
  ) as { nonces: number[]; hashes: string[] };
  const solution = {
    nonces: solved.nonces,
    hashes: solved.hashes.map((h) => Buffer.from(h, 'hex').toString('base64url')),
  };
  const ok =
    (await spotCheckSolution(puzzle, solution, { hasher })) &&
    (await verifySolution(puzzle, solution, { hasher }));
  if (!ok) throw new Error(`${bin.id}: its solution of a default puzzle fails the server's check`);
}

/** Native rates for a candidate or a peer's per-attempt work: the best of OpenSSL (in Node), Go, libsodium and, for scrypt, the SIMD lane solvers (lanes.ts). */
import { execFileSync } from 'node:child_process';
import { pbkdf2Sync } from 'node:crypto';
import { type Candidate, perSecond, type Rate } from './candidates.ts';
import { buildLanes, type LaneBin, laneRate } from './lanes.ts';
import { measureOpenSsl } from './native-node.ts';

export type NativeBins = { go: string; sodium?: string };
export type NativeRate = { best: number; source: string; all: Record<string, number> };

function run(bin: string, args: string[]): number {
  return perSecond(JSON.parse(execFileSync(bin, args, { encoding: 'utf8' })) as Rate);
}

function pick(all: Record<string, number>): NativeRate {
  const [source, best] = Object.entries(all).sort((a, b) => b[1] - a[1])[0]!;
  return { best, source, all };
}

function argon(bins: NativeBins, m: number, t: number, ms: number): Record<string, number> {
  const c: Candidate = { id: '', kind: 'argon2id', memoryKiB: m, iterations: t };
  return {
    openssl: perSecond(measureOpenSsl(c, ms)),
    go: run(bins.go, ['-alg', 'argon2id', '-m', String(m), '-t', String(t), '-ms', String(ms)]),
    ...(bins.sodium && { libsodium: run(bins.sodium, ['argon2id', String(m), String(t), String(ms)]) }),
  };
}

function pbkdf2(bins: NativeBins, iterations: number, ms: number): Record<string, number> {
  const c: Candidate = { id: '', kind: 'pbkdf2', iterations };
  return {
    openssl: perSecond(measureOpenSsl(c, ms)),
    go: run(bins.go, ['-alg', 'pbkdf2-sha256', '-t', String(iterations), '-ms', String(ms)]),
  };
}

let lanes: LaneBin[] | undefined;

/** The SIMD lane solvers' scrypt rates (built on first use), keyed `lanes-<instruction set>`. */
function laneRates(n: number, ms: number): Record<string, number> {
  lanes ??= buildLanes().filter((b) => b.id !== 'openssl');
  return Object.fromEntries(lanes.map((b) => [`lanes-${b.id}`, perSecond(laneRate(b, n, ms))]));
}

/** Best native hashes/s for a candidate, each implementation measured for about `ms` milliseconds. */
export function nativeRate(c: Candidate, bins: NativeBins, ms: number): NativeRate {
  if (c.kind === 'argon2id') return pick(argon(bins, c.memoryKiB, c.iterations, ms));
  if (c.kind === 'pbkdf2') return pick(pbkdf2(bins, c.iterations, ms));
  if (c.kind === 'scrypt') {
    return pick({
      openssl: perSecond(measureOpenSsl(c, ms)),
      go: run(bins.go, ['-alg', 'scrypt', '-n', String(c.n), '-ms', String(ms)]),
      ...(bins.sodium && { libsodium: run(bins.sodium, ['scrypt', String(c.n), String(ms)]) }),
      ...laneRates(c.n, ms),
    });
  }
  // Hybrid: OpenSSL doing both halves, or the fastest Argon2id followed by the fastest PBKDF2.
  const a = pick(argon(bins, c.memoryKiB, c.iterations, ms / 2));
  const p = pick(pbkdf2(bins, c.pbkdf2Iterations, ms / 2));
  return pick({
    openssl: perSecond(measureOpenSsl(c, ms)),
    [`${a.source}+${p.source}`]: 1 / (1 / a.best + 1 / p.best),
  });
}

/** Native attempts/s for a peer's per-attempt work, keyed as in peers.ts. */
export function nativePeerRate(key: string, bins: NativeBins, ms: number): NativeRate {
  const sha = /^sha256-string salt=(\d+)$/.exec(key);
  if (sha) return pick({ go: run(bins.go, ['-alg', 'sha256-string', '-salt', sha[1]!, '-ms', String(ms)]) });
  const memoryHard = /^(argon2id|scrypt) m=(\d+) t=(\d+)$/.exec(key);
  if (memoryHard?.[1] === 'scrypt')
    return nativeRate({ id: key, kind: 'scrypt', n: Number(memoryHard[2]) }, bins, ms);
  if (memoryHard) return pick(argon(bins, Number(memoryHard[2]), Number(memoryHard[3]), ms));
  if (key === 'pbkdf2-sha256 5000') {
    // ALTCHA v2's password is a 16-byte nonce plus a 4-byte counter.
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    let n = 0;
    while (performance.now() - start < ms)
      pbkdf2Sync(Buffer.alloc(20, n++), Buffer.alloc(16), 5000, 32, 'sha256');
    const cpu = process.cpuUsage(cpu0);
    const openssl = perSecond({ hashes: n, ms, cpuMs: (cpu.user + cpu.system) / 1000 });
    return pick({ openssl, go: run(bins.go, ['-alg', 'pbkdf2-sha256', '-t', '5000', '-ms', String(ms)]) });
  }
  throw new Error(`unknown native key ${key}`);
}

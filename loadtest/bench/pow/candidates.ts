/** The constructions the benchmark compares; each is measured in Chromium, in Node (WASM) and natively. */
export type Candidate =
  | { id: string; kind: 'argon2id'; memoryKiB: number; iterations: number }
  | { id: string; kind: 'scrypt'; n: number }
  | { id: string; kind: 'pbkdf2'; iterations: number }
  | { id: string; kind: 'hybrid'; memoryKiB: number; iterations: number; pbkdf2Iterations: number };

export const CANDIDATES: Candidate[] = [
  { id: 'argon2id m=1MiB t=1', kind: 'argon2id', memoryKiB: 1024, iterations: 1 },
  { id: 'argon2id m=4MiB t=1', kind: 'argon2id', memoryKiB: 4096, iterations: 1 },
  { id: 'argon2id m=4MiB t=2', kind: 'argon2id', memoryKiB: 4096, iterations: 2 },
  { id: 'argon2id m=4MiB t=3', kind: 'argon2id', memoryKiB: 4096, iterations: 3 },
  { id: 'argon2id m=8MiB t=1', kind: 'argon2id', memoryKiB: 8192, iterations: 1 },
  { id: 'argon2id m=16MiB t=1', kind: 'argon2id', memoryKiB: 16384, iterations: 1 },
  { id: 'argon2id m=32MiB t=1', kind: 'argon2id', memoryKiB: 32768, iterations: 1 },
  { id: 'scrypt N=128 (128KiB)', kind: 'scrypt', n: 128 },
  { id: 'scrypt N=256 (256KiB)', kind: 'scrypt', n: 256 },
  { id: 'scrypt N=512 (512KiB)', kind: 'scrypt', n: 512 },
  { id: 'scrypt N=1024 (1MiB)', kind: 'scrypt', n: 1024 },
  { id: 'scrypt N=2048 (2MiB)', kind: 'scrypt', n: 2048 },
  { id: 'scrypt N=4096 (4MiB)', kind: 'scrypt', n: 4096 },
  { id: 'scrypt N=16384 (16MiB)', kind: 'scrypt', n: 16384 },
  { id: 'PBKDF2-SHA-256 10k (WebCrypto)', kind: 'pbkdf2', iterations: 10_000 },
  {
    id: 'hybrid argon2id 4MiB + PBKDF2 20k',
    kind: 'hybrid',
    memoryKiB: 4096,
    iterations: 1,
    pbkdf2Iterations: 20_000,
  },
];

/** Memory one hash holds, in KiB (scrypt: 128 · r · N bytes with r = 8). */
export function memoryKiB(c: Candidate): number {
  if (c.kind === 'scrypt') return c.n;
  if (c.kind === 'pbkdf2') return 0;
  return c.memoryKiB;
}

/** A measurement: hashes completed in `ms` wall milliseconds, using `cpuMs` of CPU time when known. */
export type Rate = { hashes: number; ms: number; cpuMs?: number };

/** Hashes per CPU-second (per wall second when CPU time is unknown): one core's rate on a shared machine. */
export const perSecond = (r: Rate) => (r.hashes * 1000) / (r.cpuMs ?? r.ms);

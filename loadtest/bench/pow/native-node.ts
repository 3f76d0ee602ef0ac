/** Native baselines inside Node: OpenSSL's Argon2id, scrypt and PBKDF2 through node:crypto, one thread. */
import { argon2Sync, pbkdf2Sync, scryptSync } from 'node:crypto';
import type { Candidate, Rate } from './candidates.ts';

const salt = Buffer.alloc(16);

function hashOnce(c: Candidate, i: number): void {
  const pwd = Buffer.from([i >>> 24, (i >>> 16) & 255, (i >>> 8) & 255, i & 255]);
  const argon = (m: number, t: number) =>
    argon2Sync('argon2id', {
      message: pwd,
      nonce: salt,
      memory: m,
      passes: t,
      parallelism: 1,
      tagLength: 32,
    });
  if (c.kind === 'argon2id') argon(c.memoryKiB, c.iterations);
  else if (c.kind === 'hybrid')
    pbkdf2Sync(argon(c.memoryKiB, c.iterations), salt, c.pbkdf2Iterations, 32, 'sha256');
  else if (c.kind === 'scrypt') scryptSync(pwd, salt, 32, { N: c.n, r: 8, p: 1, maxmem: 256 * 1024 * 1024 });
  else pbkdf2Sync(pwd, salt, c.iterations, 32, 'sha256');
}

/** OpenSSL's rate for the candidate over about `ms` milliseconds. */
export function measureOpenSsl(c: Candidate, ms: number): Rate {
  hashOnce(c, 0xffff_ffff);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let hashes = 0;
  while (hashes < 2 || performance.now() - start < ms) hashOnce(c, hashes++);
  const cpu = process.cpuUsage(cpu0);
  return { hashes, ms: performance.now() - start, cpuMs: (cpu.user + cpu.system) / 1000 };
}

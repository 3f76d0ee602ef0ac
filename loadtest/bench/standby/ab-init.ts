import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OfflineKeys } from '@gatehouse/core/tokens';
import type { SnapshotApp } from '../../../standby/src/snapshot.ts';

/**
 * A/B of what a standby's `bypass.` host pays per offline challenge init (drawing the picture and
 * encoding it, sealing, the puzzles), between `standby/src` at a git revision (A, `--base`, default HEAD)
 * and the working tree (B), in one process, interleaved (the order alternates each round). The standby
 * draws the main API's click and select at full detail, inline, so a change to the drawing shows here.
 *   npx node loadtest/bench/standby/ab-init.ts --base <rev> [--rounds 6] [--inits 40]
 * Per round and side: process CPU µs per init (every thread: encoding included) and wall µs per init;
 * reported as medians over the rounds and B/A ratios. `@gatehouse/core` is the working tree's for both.
 */
const { values: flags } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '6' },
    inits: { type: 'string', default: '40' },
  },
});
const ROUNDS = Number(flags.rounds);
const INITS = Number(flags.inits);
const REPO = resolve(import.meta.dirname, '../../..');

// Inside loadtest/bench/standby/dist (ignored by git) so that the revision's imports find the repository's node_modules.
mkdirSync(join(import.meta.dirname, 'dist'), { recursive: true });
const work = mkdtempSync(join(import.meta.dirname, 'dist', 'ab-'));
try {
  const archive = execFileSync('git', ['-C', REPO, 'archive', flags.base!, 'standby/src'], {
    maxBuffer: 1 << 30,
  });
  execFileSync('tar', ['-x', '-C', work, '--exclude=*.test.ts'], { input: archive });
  type Start = (
    keys: { challenge: Buffer },
    app: SnapshotApp,
    input: { action: string; ip: string; platform: string; referer: string | null },
  ) => Promise<{ image?: { kind: string } }>;
  const sides: Record<'A' | 'B', Start> = {
    A: (await import(join(work, 'standby/src/offline-challenges.ts'))).startOfflineChallenge,
    B: (await import('../../../standby/src/offline-challenges.ts')).startOfflineChallenge,
  };
  const keys = new OfflineKeys(randomBytes(32), 'bench');
  const app: SnapshotApp = {
    id: 'app-bench',
    app_key: 'ak_bench',
    secret_hash: '',
    previous_secret_hash: null,
    previous_secret_expires_at: null,
    previous_app_key: null,
    previous_app_key_expires_at: null,
    disabled: false,
    test_mode: false,
    client_ip_policy: 'off',
    allowed_domains: [],
    // What the main API's snapshot says for an app with the default policy.
    image_kinds: ['click', 'select'],
  };
  const input = { action: 'login', ip: '203.0.113.9', platform: 'web', referer: null };

  const kinds: Record<'A' | 'B', Record<string, number>> = { A: {}, B: {} };
  const runSide = async (side: 'A' | 'B', n: number) => {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const kind = (await sides[side](keys, app, input)).image?.kind ?? 'none';
      kinds[side][kind] = (kinds[side][kind] ?? 0) + 1;
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1000 / n;
    const cpu = process.cpuUsage(cpu0);
    return { cpu: (cpu.user + cpu.system) / n, wall };
  };
  // Warm-up: the canvas, fonts and backgrounds of both sides.
  await runSide('A', 5);
  await runSide('B', 5);
  kinds.A = {};
  kinds.B = {};
  const rows: Record<'A' | 'B', { cpu: number; wall: number }[]> = { A: [], B: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order: ('A' | 'B')[] = r % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
    for (const side of order) rows[side].push(await runSide(side, INITS));
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const fig = (side: 'A' | 'B', k: 'cpu' | 'wall') => median(rows[side].map((x) => x[k]));
  console.log(
    `standby init, A = ${flags.base} vs B = working tree; ${ROUNDS} rounds x ${INITS} inits, interleaved; load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`kinds served: A ${JSON.stringify(kinds.A)}, B ${JSON.stringify(kinds.B)}`);
  for (const k of ['cpu', 'wall'] as const) {
    const a = fig('A', k);
    const b = fig('B', k);
    console.log(
      `${k === 'cpu' ? 'process CPU' : 'wall'} per init: A ${(a / 1000).toFixed(2)} ms, B ${(b / 1000).toFixed(2)} ms, B/A ${(b / a).toFixed(2)}x`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

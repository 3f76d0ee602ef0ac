import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { median, prepareAbSides, printLoadAverage, startSides } from './ab-sides.ts';
import type { Child } from './child.ts';
import { type Measurement, measure } from './load.ts';
import { memoryMap, rssMiB } from './memory.ts';
import type { CreatedApp } from './protocol.ts';

/**
 * Memory: an A/B of the API process's peak RSS and CPU per request between two settings (or the API
 * at a revision, A, and the working tree, B), interleaved in one run (the order alternates each round), on the
 * bench's own cases: `challenge init, invisible tier` and `validate, fresh token` (PostgreSQL). Each round
 * drives each side first at a fixed rate (`--rate`, the same work for both: the peak RSS and CPU µs per
 * request are compared at equal load), then flat out (20 connections, the bench's load: req/s and the peak
 * there). Peak RSS is sampled every 100 ms; the same two processes serve every round, as in the bench.
 *   npx node loadtest/bench/memory-ab.ts [--base HEAD] [--rounds 4] [--seconds 4] [--rate 2000]
 *     [--a-env K=V;K=V] [--b-env ...] [--a-flags='<node flags>'] [--b-flags=...] [--core]
 * Both sides run with the API image's flags and allocator unless told otherwise (`--a-env LD_PRELOAD=`
 * runs A on glibc's malloc, to weigh the allocator; docs/decisions.md, "Runtime and API memory").
 * `--core`: A bundles the revision's core/.
 */
const { values: flags } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '4' },
    rate: { type: 'string', default: '2000' },
    'a-env': { type: 'string' },
    'b-env': { type: 'string' },
    'a-flags': { type: 'string' },
    'b-flags': { type: 'string' },
    /** Side A bundles the revision's core/ too (a change in core/ then measured on B alone). */
    core: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
const RATE = Number(flags.rate);
const envOf = (given: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (given ?? '')
      .split(';')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
const flagsOf = (given: string | undefined) => given?.split(/\s+/).filter(Boolean);
const sides = await prepareAbSides({
  base: flags.base!,
  prefix: 'memab',
  ...(flags.core ? { workspaces: { core: 'core' } } : {}),
});
try {
  const { prep, servers } = await startSides(sides, {
    flags: { a: flagsOf(flags['a-flags']), b: flagsOf(flags['b-flags']) },
    env: { a: envOf(flags['a-env']), b: envOf(flags['b-env']) },
  });
  const parties = { postgresDatabase: sides.database.name };
  const signals = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };
  const specs = new Map<Child, { init: () => Promise<Spec>; validate: (rate?: number) => Promise<Spec> }>();
  type Spec = { path: string; headers: Record<string, string>; body: () => string };
  for (const server of [servers.A, servers.B]) {
    const inv = await server.call<CreatedApp>({
      type: 'create-app',
      plan: 'enterprise',
      challenge: 'invisible-test-mode',
    });
    const app = await server.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
    const initBody = JSON.stringify({ app_key: inv.appKey, action: 'login', signals });
    specs.set(server, {
      init: async () => ({ path: '/v1/challenge/init', headers: {}, body: () => initBody }),
      // Fresh tokens, minted by the third process (prep) so the measured one holds only what serving costs.
      validate: async (rate?: number) => {
        const tokens = await prep.call<string[]>({
          type: 'mint',
          appId: app.appId,
          count: Math.ceil((rate ?? 8000) * SECONDS * 1.2),
          consume: false,
        });
        let i = 0;
        return {
          path: '/v1/validate',
          headers: { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret },
          body: () => JSON.stringify({ pass_token: tokens[i++ % tokens.length] }),
        };
      },
    });
  }
  console.log(
    `base ${flags.base}; A ${flags['a-flags'] ?? "the API image's flags"} ${flags['a-env'] ?? ''}; B ${flags['b-flags'] ?? "the API image's flags"} ${flags['b-env'] ?? ''}; ` +
      `at rest A ${rssMiB(servers.A.pid)} MiB, B ${rssMiB(servers.B.pid)} MiB; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const keys = [
    'peakPaced',
    'peakFlat',
    'initCpuPaced',
    'validateCpuPaced',
    'initRps',
    'initCpuFlat',
  ] as const;
  const rows = Object.fromEntries(keys.map((k) => [k, { A: [] as number[], B: [] as number[] }])) as Record<
    (typeof keys)[number],
    Record<'A' | 'B', number[]>
  >;
  const peak = (...ms: Measurement[]) => Math.max(...ms.map((m) => m.rss.peakMiB ?? 0));
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const server = servers[side];
      const spec = specs.get(server)!;
      const paced = { connections: 20, durationSeconds: SECONDS, rate: RATE, parties };
      const flat = { connections: 20, durationSeconds: SECONDS, parties };
      const i1 = await measure(server, await spec.init(), paced);
      const v1 = await measure(server, await spec.validate(RATE), paced);
      const i2 = await measure(server, await spec.init(), flat);
      const v2 = await measure(server, await spec.validate(), flat);
      rows.peakPaced[side].push(peak(i1, v1));
      rows.peakFlat[side].push(peak(i2, v2));
      rows.initCpuPaced[side].push(i1.cpu.server ?? 0);
      rows.validateCpuPaced[side].push(v1.cpu.server ?? 0);
      rows.initRps[side].push(Math.round(i2.reqPerSec));
      rows.initCpuFlat[side].push(i2.cpu.server ?? 0);
      console.log(
        `round ${round} ${side}: at ${RATE}/s peak ${peak(i1, v1)} MiB (init ${i1.cpu.server} µs, validate ${v1.cpu.server} µs); ` +
          `flat out peak ${peak(i2, v2)} MiB (init ${Math.round(i2.reqPerSec)}/s ${i2.cpu.server} µs, validate ${Math.round(v2.reqPerSec)}/s ${v2.cpu.server} µs); ` +
          `200s ${i1.statuses['200'] ?? 0}/${i1.requests} ${v1.statuses['200'] ?? 0}/${v1.requests} ${i2.statuses['200'] ?? 0}/${i2.requests} ${v2.statuses['200'] ?? 0}/${v2.requests}`,
      );
    }
  }
  for (const [what, { A, B }] of Object.entries(rows)) {
    const rounds = A.map((a, i) => (B[i]! / a).toFixed(2)).join(' ');
    console.log(
      `${what}: A ${median(A)} (max ${Math.max(...A)}), B ${median(B)} (max ${Math.max(...B)}); B/A of medians ` +
        `${(median(B) / median(A)).toFixed(2)}; by round ${rounds} (B lower in ${A.filter((a, i) => B[i]! < a).length}/${A.length})`,
    );
  }
  for (const side of ['A', 'B'] as const) {
    const map = memoryMap(servers[side].pid);
    if (map)
      console.log(
        `${side} now: RSS ${rssMiB(servers[side].pid)} MiB; ${map.rows
          .slice(0, 5)
          .map(([n, v]) => `${n} ${v}`)
          .join(', ')}`,
      );
  }
  printLoadAverage();
} finally {
  await sides.close();
}

import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { prepareAbSides, startSides } from './ab-sides.ts';
import type { Child } from './child.ts';
import { type Measurement, measure } from './load.ts';
import { descendantsOf, memoryMap, rssMiB } from './memory.ts';
import { dockerfileNodeFlags } from './node-flags.ts';
import type { CreatedApp, SolvedChallenges } from './protocol.ts';

/**
 * Memory: the API process's RSS (and its renderer processes', apart) under image init load, A/B
 * between the API at a git revision (A, `--base`) and the working tree (B), both bundled and started with
 * the API image's flags, on one PostgreSQL database, interleaved (the order alternates each round). Each
 * round drives each side with invisible inits, then slide inits (drawn by the image pool), flat out with 20
 * connections; the same two processes serve every round, as one API process serves the whole bench.
 *   npx node loadtest/bench/renderer-memory.ts --base <rev> [--rounds 3] [--seconds 4] [--submits 3000]
 *     [--a-flags '<node flags>'] [--b-flags ...] [--a-env K=V,K=V] [--b-env ...]
 * Between the init phases, a burst of `--submits` test-mode submits (solved in a third process). Flags
 * default to the API image's; `--base HEAD` with other flags or environment compares settings instead.
 * A is the revision's `api/` with its own `@gatehouse/core`, `standby` and `node` (linked in the extracted
 * tree's node_modules, found before the repository's); B is the working tree.
 */
const { values: flags } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    submits: { type: 'string', default: '3000' },
    'a-flags': { type: 'string' },
    'b-flags': { type: 'string' },
    'a-env': { type: 'string' },
    'b-env': { type: 'string' },
    /** Ask each API for a diagnostic report at the end (needs --report-on-signal in its flags): V8's heap by space. */
    report: { type: 'boolean' },
  },
});
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
// The revision's workspaces that the API bundles, each found by the revision's code first.
const WORKSPACES = { core: 'core', standby: 'standby', node: 'sdk/node' };
const sides = await prepareAbSides({ base: flags.base!, prefix: 'mem', workspaces: WORKSPACES });
const name = sides.database.name;
const signals = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const mib = (n: number | null | undefined) => (n == null ? '-' : n.toFixed(1));
try {
  const nodeFlags = dockerfileNodeFlags();
  const flagsOf = (given: string | undefined) =>
    given === undefined ? nodeFlags : given.split(/\s+/).filter(Boolean);
  const envOf = (given: string | undefined) =>
    Object.fromEntries(
      (given ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => kv.split('=') as [string, string]),
    );
  const { prep, servers } = await startSides(sides, {
    flags: {
      a: flagsOf(flags['a-flags']),
      b: flagsOf(flags['b-flags']),
    },
    env: { a: envOf(flags['a-env']), b: envOf(flags['b-env']) },
  });
  const submitApp = await prep.call<CreatedApp>({
    type: 'create-app',
    plan: 'enterprise',
    challenge: 'invisible-test-mode',
  });
  const submits = async () => {
    const { bodies } = await prep.call<SolvedChallenges>({
      type: 'solved-challenges',
      appKey: submitApp.appKey,
      count: Number(flags.submits),
    });
    let i = 0;
    return { path: '/v1/challenge/submit', headers: {}, body: () => bodies[i++]! };
  };
  const parties = { postgresDatabase: name };
  const spec = async (server: Child, challenge: 'invisible-test-mode' | 'slide') => {
    const app = await server.call<CreatedApp>({ type: 'create-app', plan: 'enterprise', challenge });
    const body = JSON.stringify({ app_key: app.appKey, action: 'login', signals });
    return { path: '/v1/challenge/init', headers: {}, body: () => body };
  };
  const specs = {
    A: { invisible: await spec(servers.A, 'invisible-test-mode'), slide: await spec(servers.A, 'slide') },
    B: { invisible: await spec(servers.B, 'invisible-test-mode'), slide: await spec(servers.B, 'slide') },
  };
  console.log(
    `base ${flags.base}; API flags A ${flagsOf(flags['a-flags']).join(' ')} ${flags['a-env'] ?? ''}, B ${flagsOf(flags['b-flags']).join(' ')} ${flags['b-env'] ?? ''}; at rest: A ${mib(rssMiB(servers.A.pid))} MiB, ` +
      `B ${mib(rssMiB(servers.B.pid))} MiB; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  type Row = { api: number[]; children: number[]; total: number[]; served: number[] };
  const rows = {
    A: { api: [], children: [], total: [], served: [] },
    B: { api: [], children: [], total: [], served: [] },
  } as Record<'A' | 'B', Row>;
  const ok = (m: Measurement) => `${Math.round((m.statuses['200'] ?? 0) / m.seconds)}/s served`;
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const server = servers[side];
      const load = { connections: 20, durationSeconds: SECONDS, parties };
      const inv = await measure(server, specs[side].invisible, load);
      const sub = await measure(server, await submits(), { ...load, amount: Number(flags.submits) });
      const img = await measure(server, specs[side].slide, load);
      const api = Math.max(inv.rss.peakMiB ?? 0, sub.rss.peakMiB ?? 0, img.rss.peakMiB ?? 0);
      rows[side].api.push(api);
      rows[side].children.push(img.rss.childrenPeakMiB ?? 0);
      rows[side].total.push(
        Math.max(inv.rss.totalPeakMiB ?? 0, sub.rss.totalPeakMiB ?? 0, img.rss.totalPeakMiB ?? 0),
      );
      rows[side].served.push((img.statuses['200'] ?? 0) / img.seconds);
      const kids = descendantsOf(server.pid);
      console.log(
        `round ${round} ${side}: API peak ${mib(inv.rss.peakMiB)} (invisible, ${ok(inv)}) · ${mib(sub.rss.peakMiB)} ` +
          `(submit, ${sub.statuses['200'] ?? 0} passed, ${inv.cpu.server} · ${sub.cpu.server} us) · ${mib(img.rss.peakMiB)} MiB ` +
          `(slide, ${ok(img)}, ${img.statuses['503'] ?? 0} shed); children ${kids.length} peak ${mib(img.rss.childrenPeakMiB)} MiB; ` +
          `API + children peak ${mib(img.rss.totalPeakMiB)} MiB; API CPU ${img.cpu.server} us per slide init`,
      );
    }
  }
  for (const side of ['A', 'B'] as const) {
    const r = rows[side];
    console.log(
      `${side}: API peak RSS max ${mib(Math.max(...r.api))} MiB (median of rounds ${mib(median(r.api))}); ` +
        `renderer processes peak ${mib(Math.max(...r.children))} MiB; API + renderers ${mib(Math.max(...r.total))} MiB; ` +
        `slide inits served ${Math.round(median(r.served))}/s (median)`,
    );
  }
  if (flags.report) {
    for (const side of ['A', 'B'] as const) process.kill(servers[side].pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 3000));
  }
  for (const side of ['A', 'B'] as const) {
    for (const pid of [servers[side].pid, ...descendantsOf(servers[side].pid)]) {
      const map = memoryMap(pid);
      if (!map) continue;
      const top = map.rows
        .slice(0, 8)
        .map(([n, v]) => `${n} ${v}`)
        .join(', ');
      const who = pid === servers[side].pid ? 'API' : 'renderer';
      console.log(
        `${side} ${who} now: RSS ${mib(rssMiB(pid))} MiB, PSS ${mib(map.pssMiB)}, shared file-backed ${mib(map.sharedCleanMiB)}; ${top}`,
      );
    }
  }
  console.log(
    `B/A API peak ${(Math.max(...rows.B.api) / Math.max(...rows.A.api)).toFixed(2)}; B/A slide served ` +
      `${(median(rows.B.served) / median(rows.A.served)).toFixed(2)}; load average after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
} finally {
  await sides.close();
}

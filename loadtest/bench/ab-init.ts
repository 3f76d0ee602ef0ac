import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { prepareAbSides, printAbFigures, startSides } from './ab-sides.ts';
import { measure } from './load.ts';
import type { CreatedApp } from './protocol.ts';

/**
 * A/B of the invisible challenge init between the API at a git revision (A, `--base`, default HEAD) and the
 * working tree (B), both bundled as the container runs them, on one PostgreSQL database, interleaved in one
 * run (the order alternates each round): API and PostgreSQL CPU µs per init, flat out (20 connections), the
 * bench's request (a test-mode app on the enterprise plan, the same body as `challenge init, invisible tier`).
 *   npx node loadtest/bench/ab-init.ts --base <rev> [--rounds 6] [--seconds 2] [--core] [--take <rev>:<path> ...]
 * Only `api/` is taken from the revision (its tests left out) and `@gatehouse/core` is the working tree's for
 * both, unless `--core`: then side A bundles the revision's `core/` too (found by its code first), so a change
 * in core/ is measured on B alone. `--take <rev>:<path>` writes single files of another revision over A's
 * tree. TEST_POSTGRES_URL (else postgres://postgres@127.0.0.1:5432/postgres).
 */
const { values: flags } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '2' },
    take: { type: 'string', multiple: true, default: [] },
    core: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
const sides = await prepareAbSides({
  base: flags.base!,
  prefix: 'abi',
  take: flags.take,
  ...(flags.core ? { workspaces: { core: 'core' } } : {}),
});
const name = sides.database.name;
try {
  const { prep, servers } = await startSides(sides);
  const parties = { postgresDatabase: name };
  const app = await prep.call<CreatedApp>({
    type: 'create-app',
    plan: 'enterprise',
    challenge: 'invisible-test-mode',
  });
  const signals = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };
  const body = JSON.stringify({ app_key: app.appKey, action: 'login', signals });
  const spec = { path: '/v1/challenge/init', headers: {}, body: () => body };
  for (const server of Object.values(servers)) {
    await measure(server, spec, { connections: 20, durationSeconds: 1 });
  }
  const figures = { api: { A: [], B: [] }, postgres: { A: [], B: [] }, rps: { A: [], B: [] } } as Record<
    string,
    Record<'A' | 'B', number[]>
  >;
  console.log(
    `base ${flags.base}${flags.take.length ? ` (A takes ${flags.take.join(', ')})` : ''}; load average before ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const m = await measure(servers[side], spec, { connections: 20, durationSeconds: SECONDS, parties });
      figures.api![side].push(m.cpu.server!);
      figures.postgres![side].push(m.cpu.postgres!);
      figures.rps![side].push(Math.round(m.reqPerSec));
      console.log(
        `round ${round} ${side}: ${Math.round(m.reqPerSec)} req/s, ${m.cpu.server} µs API, ${m.cpu.postgres} PostgreSQL ` +
          `(${m.statuses['200'] ?? 0}/${m.requests} 200)`,
      );
    }
  }
  printAbFigures(figures);
} finally {
  await sides.close();
}

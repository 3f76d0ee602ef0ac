import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { prepareAbSides, printAbFigures, startSides } from './ab-sides.ts';
import { measure } from './load.ts';
import type { CreatedApp, SolvedChallenges } from './protocol.ts';

/**
 * A/B of the challenge submit between the API at a git revision (A, `--base`, default HEAD) and the working
 * tree (B), both bundled as the container runs them, on one PostgreSQL database, interleaved in one run (the
 * order alternates each round): API and PostgreSQL CPU µs per test-mode submit, flat out and at 50/s.
 * Test-mode puzzles (one 8 KiB hash) keep the hash out of the comparison: what differs is the framework.
 *   npx node loadtest/bench/ab-submit.ts --base <rev> [--rounds 4] [--flat 3000] [--slow 200]
 * Only `api/` is taken from the revision (its tests left out); `@gatehouse/core` is the working tree's for
 * both. TEST_POSTGRES_URL (else postgres://postgres@127.0.0.1:5432/postgres).
 */
const { values: flags } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '4' },
    flat: { type: 'string', default: '3000' },
    slow: { type: 'string', default: '200' },
  },
});
const ROUNDS = Number(flags.rounds);
const FLAT = Number(flags.flat);
const SLOW = Number(flags.slow);
const sides = await prepareAbSides({ base: flags.base!, prefix: 'ab' });
const name = sides.database.name;
try {
  const { prep, servers } = await startSides(sides);
  const parties = { postgresDatabase: name };
  const app = await prep.call<CreatedApp>({
    type: 'create-app',
    plan: 'enterprise',
    challenge: 'invisible-test-mode',
  });
  const solved = async (count: number) =>
    (await prep.call<SolvedChallenges>({ type: 'solved-challenges', appKey: app.appKey, count })).bodies;
  const spec = (bodies: string[]) => {
    let i = 0;
    return { path: '/v1/challenge/submit', headers: {}, body: () => bodies[i++]! };
  };
  for (const server of Object.values(servers)) {
    await measure(server, spec(await solved(1000)), { connections: 20, durationSeconds: 1, amount: 1000 });
  }
  const figures = {
    flat: { A: [], B: [] },
    slow: { A: [], B: [] },
    pgFlat: { A: [], B: [] },
    pgSlow: { A: [], B: [] },
  } as Record<string, Record<'A' | 'B', number[]>>;
  console.log(
    `base ${flags.base}; load average before ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const flat = await measure(servers[side], spec(await solved(FLAT)), {
        connections: 20,
        durationSeconds: 1,
        amount: FLAT,
        parties,
      });
      const slow = await measure(servers[side], spec(await solved(SLOW)), {
        connections: 2,
        durationSeconds: SLOW / 50,
        rate: 50,
        amount: SLOW,
        parties,
      });
      figures.flat![side].push(flat.cpu.server!);
      figures.pgFlat![side].push(flat.cpu.postgres!);
      figures.slow![side].push(slow.cpu.server!);
      figures.pgSlow![side].push(slow.cpu.postgres!);
      const ok = (m: typeof flat) => `${m.statuses['200'] ?? 0}/${m.requests} passed`;
      console.log(
        `round ${round} ${side}: flat out ${flat.cpu.server} µs API, ${flat.cpu.postgres} PostgreSQL (${ok(flat)}); ` +
          `50/s ${slow.cpu.server} µs API, ${slow.cpu.postgres} PostgreSQL (${ok(slow)})`,
      );
    }
  }
  printAbFigures(figures, ' µs');
} finally {
  await sides.close();
}

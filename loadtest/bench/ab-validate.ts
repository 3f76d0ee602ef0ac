import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { prepareAbSides, printAbFigures, startSides } from './ab-sides.ts';
import type { Child } from './child.ts';
import { measure } from './load.ts';
import { pool } from './pool.ts';
import type { CreatedApp } from './protocol.ts';

/**
 * A/B of validate between the API at a git revision (A, `--base`, default HEAD) and the working tree (B),
 * both bundled as the container runs them, on one PostgreSQL database, interleaved in one run (the order
 * alternates each round): per side and round, `--fresh` fresh tokens validated flat out, then `--replays`
 * replays of 500 tokens that side validated once just before; API and PostgreSQL CPU µs per validation and
 * validations a second (answers over the wall time around the run, which autocannon with `amount` ends on
 * its 1 s tick: coarse, compare the CPU figures), and each side's replay ÷ fresh throughput.
 *   npx node loadtest/bench/ab-validate.ts --base <rev> [--take <rev>:<path> ...] [--rounds 4] [--fresh 10000]
 *     [--replays 20000] [--core]
 * `--take` puts a file of another revision into A (as `git show <rev>:<path>`): a change measured alone
 * on a base whose other files keep up with the working tree's core, e.g. `--base HEAD --take
 * <rev>:api/src/tokens/pass-tokens.ts --take <rev>:api/src/tokens/pass-token-claims.ts`.
 * Only `api/` is taken from the revision (its tests left out); `@gatehouse/core` is the working tree's for
 * both, unless `--core`: then side A bundles the revision's `core/` too, so a change in core/ is measured on
 * B alone (as ab-init.ts does). TEST_POSTGRES_URL (else postgres://postgres@127.0.0.1:5432/postgres).
 */
const { values: flags } = parseArgs({
  options: {
    base: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '4' },
    fresh: { type: 'string', default: '10000' },
    replays: { type: 'string', default: '20000' },
    take: { type: 'string', multiple: true, default: [] },
    core: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const FRESH = Number(flags.fresh);
const REPLAYS = Number(flags.replays);
const sides = await prepareAbSides({
  base: flags.base!,
  prefix: 'abv',
  take: flags.take ?? [],
  ...(flags.core ? { workspaces: { core: 'core' } } : {}),
});
const name = sides.database.name;
try {
  const { prep, servers } = await startSides(sides);
  const parties = { postgresDatabase: name };
  const app = await prep.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
  const headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
  const body = (token: string) => JSON.stringify({ pass_token: token });
  const mint = (count: number) =>
    prep.call<string[]>({ type: 'mint', appId: app.appId, count, consume: false });
  const once = (tokens: string[]) => {
    let i = 0;
    return { path: '/v1/validate', headers, body: () => body(tokens[Math.min(i++, tokens.length - 1)]!) };
  };
  const cycle = (tokens: string[]) => {
    let i = 0;
    return { path: '/v1/validate', headers, body: () => body(tokens[i++ % tokens.length]!) };
  };
  /** Validates each token once through `server` (so that its replays are replays of its own claims). */
  const spend = (server: Child, tokens: string[]) =>
    pool(tokens.length, 16, async (i) => {
      const res = await fetch(`${server.url}/v1/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: body(tokens[i]!),
      });
      const answer = (await res.json()) as { data?: { valid?: boolean } };
      if (answer.data?.valid !== true) throw new Error(`spending: ${JSON.stringify(answer)}`);
    });
  const flat = (amount: number) => ({ connections: 20, durationSeconds: 1, amount, parties });
  for (const server of Object.values(servers)) {
    await measure(server, once(await mint(1000)), flat(1000));
    const warm = await mint(500);
    await spend(server, warm);
    await measure(server, cycle(warm), flat(2000));
  }
  type Side = 'A' | 'B';
  const figures: Record<string, Record<Side, number[]>> = {};
  const add = (what: string, side: Side, v: number) => {
    figures[what] ??= { A: [], B: [] };
    figures[what][side].push(v);
  };
  console.log(
    `base ${flags.base}; load average before ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const server = servers[side];
      const fresh = await measure(server, once(await mint(FRESH)), flat(FRESH));
      const used = await mint(500);
      await spend(server, used);
      const replay = await measure(server, cycle(used), flat(REPLAYS));
      add('fresh API µs', side, fresh.cpu.server!);
      add('fresh PostgreSQL µs', side, fresh.cpu.postgres!);
      const rate = (m: typeof fresh) => m.requests / (m.cpuWindowSeconds ?? m.seconds);
      add('fresh req/s', side, Math.round(rate(fresh)));
      add('replay API µs', side, replay.cpu.server!);
      add('replay PostgreSQL µs', side, replay.cpu.postgres!);
      add('replay req/s', side, Math.round(rate(replay)));
      add('replay ÷ fresh req/s', side, Math.round((rate(replay) / rate(fresh)) * 100) / 100);
      const ok = (m: typeof fresh, code: string) => `${m.statuses['200'] ?? 0}/${m.requests} ${code}`;
      console.log(
        `round ${round} ${side}: fresh ${Math.round(rate(fresh))}/s ${fresh.cpu.server} µs API ${fresh.cpu.postgres} PG (${ok(fresh, 'HTTP 200')}); ` +
          `replay ${Math.round(rate(replay))}/s ${replay.cpu.server} µs API ${replay.cpu.postgres} PG (${ok(replay, 'HTTP 200')})`,
      );
    }
  }
  printAbFigures(figures);
} finally {
  await sides.close();
}

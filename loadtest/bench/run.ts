import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { buildServer } from '../../api/scripts/build-server.ts';
import { Child } from './child.ts';
import type { Parties } from './cpu.ts';
import {
  combine,
  idleCpu,
  type LoadOptions,
  type LoadSpec,
  type Measurement,
  measure,
  measureNetOfIdle,
  paced,
  pacedSegment,
  pacedUntil,
  type Segment,
  warmUp,
} from './load.ts';
import { benchApiEnv, dockerfileNodeFlags } from './node-flags.ts';
import { pool } from './pool.ts';
import type { CreatedApp, LoopWatch, Outcomes, ProfileSummary, SolvedChallenges } from './protocol.ts';
import {
  byFlow,
  type CaseMeta,
  type CaseResult,
  ceiling,
  describeRun,
  type Flow,
  printTable,
  type RunInfo,
  rows,
  type Server,
  writeDocs,
  writeJson,
} from './report.ts';

/**
 * `npm run bench`: throughput and latency of the API's hot endpoints against a bare Koa app, in one run,
 * servers in child processes, autocannon in this one. Options (flag or environment variable):
 *   --duration <s>     BENCH_DURATION     seconds measured per case (5)
 *   --connections <n>  BENCH_CONNECTIONS  concurrent connections (20)
 *   --warmup <s>       BENCH_WARMUP       unmeasured seconds before each case (1)
 *   --profile          BENCH_PROFILE=1    sample the API process's CPU per case and summarise it
 *                      BENCH_PROFILE_DIR  with --profile, also write each case's whole profile there
 *                                         (<case name>.cpuprofile, for Chrome DevTools)
 *   --no-write         BENCH_WRITE=0      do not rewrite docs/benchmarks.md
 *   --only <text>      BENCH_ONLY         run only the database groups whose label contains <text>
 *                                         (pglite, postgresql, redis); the Koa baseline always runs
 *   --cases <list>     BENCH_CASES        run only the cases whose label (as in the table, e.g.
 *                                         "validate, fresh token (PostgreSQL)") contains one of <list>'s
 *                                         items, case-insensitively; items are separated by "|" or by a
 *                                         comma NOT followed by a space (labels hold ", "), so
 *                                         --cases "validate, used|validate, fresh" is two items and
 *                                         --cases "validate, fresh" one. A case a kept case depends on
 *                                         still runs (CASE_DEPENDS: bare Koa always, bare Koa + UPDATE
 *                                         for a fresh validation, the used-token case that sizes it, the
 *                                         idle bystander for the flood, the invisible init for the
 *                                         submits, ...); a goal whose cases did not run reads "not
 *                                         measured". Combine with --only to pick the database;
 *                                         needs --no-write.
 *   --peers            BENCH_PEERS=1      on PostgreSQL, also Cap and ALTCHA (peer-child.ts) doing their
 *                                         equivalents of our flows, and our submit at the real puzzle
 *   --json <file>      BENCH_JSON         also write every case, its full measurement and the run to <file>
 *   --sources          BENCH_SOURCES=1    run the API child from its TypeScript sources instead of the bundle
 *                                         the container runs (api/scripts/build-server.ts): for comparisons
 *                      BENCH_REAL_PUZZLE=0  with --peers, leave out the real-puzzle submit (its solving takes
 *                                         minutes of CPU before the case): for quick runs on other goals;
 *                      BENCH_REAL_PUZZLE=1  run it without --peers too (to profile the submit path alone)
 *   BENCH_POSTGRES_URL (else TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REDIS_URL (else TEST_REDIS_URL, else redis://127.0.0.1:6379)
 *   BENCH_LOG_LEVEL    the API's LOG_LEVEL (info, as deployed; its output goes to /dev/null)
 *   BENCH_API_NODE_FLAGS  the measured API process's Node flags instead of the API image's
 *   BENCH_API_ENV      its allocator environment instead of the API image's (NAME=value ...;
 *                      `BENCH_API_ENV=LD_PRELOAD=` for glibc's malloc)
 */
const REPO = resolve(import.meta.dirname, '../..');
const DOCS = join(REPO, 'docs/benchmarks.md');
const TARGET_RATIO = 0.5;
/**
 * The API process's Node flags, read from the API image's CMD (the Dockerfile's `api` target) so the bench measures what ships (a smaller
 * young generation and a capped old one: docs/decisions.md); BENCH_API_NODE_FLAGS (space-separated) replaces
 * them, to measure another setting against what ships.
 */
const API_NODE_FLAGS =
  process.env.BENCH_API_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? dockerfileNodeFlags();
/** The measured API process's allocator: the API image's (jemalloc), or BENCH_API_ENV's (node-flags.ts). */
const API_ENV = benchApiEnv();
/**
 * The API child (relative to this folder): bundled by the build the container runs (the Dockerfile's `api` target), with
 * the bench's commands as one more entry, so the process measured runs what ships; `--sources` for the
 * TypeScript sources. Set by main() once the bundle is built.
 */
let API_CHILD = './api-child.ts';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    warmup: { type: 'string' },
    profile: { type: 'boolean' },
    'no-write': { type: 'boolean' },
    only: { type: 'string' },
    cases: { type: 'string' },
    peers: { type: 'boolean' },
    json: { type: 'string' },
    sources: { type: 'boolean' },
  },
});
const env = process.env;
const options = {
  durationSeconds: Number(flags.duration ?? env.BENCH_DURATION ?? 5),
  connections: Number(flags.connections ?? env.BENCH_CONNECTIONS ?? 20),
  warmupSeconds: Number(flags.warmup ?? env.BENCH_WARMUP ?? 1),
  profile: flags.profile ?? env.BENCH_PROFILE === '1',
  write: !(flags['no-write'] ?? env.BENCH_WRITE === '0'),
  logLevel: env.BENCH_LOG_LEVEL ?? 'info',
  only: (flags.only ?? env.BENCH_ONLY ?? '').toLowerCase(),
  cases: (flags.cases ?? env.BENCH_CASES ?? '')
    .toLowerCase()
    .split(/\||,(?!\s)/)
    .map((item) => item.trim())
    .filter(Boolean),
  peers: flags.peers ?? env.BENCH_PEERS === '1',
  realPuzzle: env.BENCH_REAL_PUZZLE === '1' ? true : env.BENCH_REAL_PUZZLE === '0' ? false : undefined,
  json: flags.json ?? env.BENCH_JSON,
  sources: flags.sources ?? env.BENCH_SOURCES === '1',
  postgresUrl:
    env.BENCH_POSTGRES_URL ?? env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: env.BENCH_REDIS_URL ?? env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
};
if (options.cases.length > 0 && options.write) {
  throw new Error('--cases runs part of the bench: add --no-write (docs/benchmarks.md holds whole runs)');
}
for (const key of ['durationSeconds', 'connections', 'warmupSeconds'] as const) {
  if (!Number.isFinite(options[key]) || options[key] < 0) throw new Error(`--${key}: not a number`);
}
const load = { connections: options.connections, durationSeconds: options.durationSeconds };
const warm = { connections: options.connections, durationSeconds: options.warmupSeconds };

const results: CaseResult[] = [];
const profiles: { name: string; summary: ProfileSummary }[] = [];

function section(title: string): void {
  console.log(`\n== ${title}`);
}

/** Our server's cases: the meta of a case named `name` in the group `group`. */
const ours = (name: string, group: string, flow: Flow): CaseMeta => ({
  name,
  group,
  flow,
  server: 'gatehouse',
});

interface RunExtra {
  /** Said beside the figures; asked after the run, so it can tell whether prepared items ran out. */
  note?: () => string | undefined;
  /** Peer cases: what the peer should answer to every request; anything else is noted. */
  expect?: keyof Outcomes;
  /** Connections and rate of this case, where they differ from the run's (a bystander's light load). */
  load?: Partial<LoadOptions>;
  /**
   * A fixed low rate: also measure the server idle before and after, and its CPU net of that (load.ts); the
   * idle rate before may be measured already (`idleBefore`, while the case's items were prepared).
   */
  netOfIdle?: true | { idleBefore: Promise<number | null> };
  /** Said first in the note, from the measurement (a paced case's finer percentiles). */
  describe?: (m: Measurement) => string;
  /** Wraps the measured load (not the idle windows around it): to run something beside it, or watch it. */
  around?: (task: () => Promise<Measurement>) => Promise<Measurement>;
}

async function run(meta: CaseMeta, child: Child, spec: LoadSpec, parties: Parties, extra: RunExtra = {}) {
  process.stdout.write(`   ${meta.name} ... `);
  if (extra.expect) await child.call<Outcomes>({ type: 'outcomes' }); // counts from the warm-up go
  const profileFile =
    options.profile && env.BENCH_PROFILE_DIR
      ? join(resolve(env.BENCH_PROFILE_DIR), `${meta.name.replace(/[^\w]+/g, '-')}.cpuprofile`)
      : undefined;
  const loadOptions = { ...load, ...extra.load, profile: options.profile, profileFile, parties };
  const around = extra.around ?? ((task) => task());
  const m = extra.netOfIdle
    ? await measureNetOfIdle(child, spec, {
        ...loadOptions,
        idleBefore: extra.netOfIdle === true ? undefined : extra.netOfIdle.idleBefore,
        around,
      })
    : await around(() => measure(child, spec, loadOptions));
  const outcomes = extra.expect ? await child.call<Outcomes>({ type: 'outcomes' }) : undefined;
  const notes = [extra.describe?.(m), extra.note?.(), m.idle && idleNote(m)];
  if (outcomes) {
    const unexpected = extra.expect === 'accepted' ? outcomes.rejected : outcomes.accepted;
    notes.push(
      `${unexpected ? '!!! ' : ''}peer: ${outcomes.accepted} accepted, ${outcomes.rejected} rejected`,
    );
  }
  const note = notes.filter(Boolean).join('; ');
  results.push({ ...meta, m, ...(note ? { note } : {}), ...(outcomes ? { outcomes } : {}) });
  if (m.profile) profiles.push({ name: meta.name, summary: m.profile });
  const machine = m.cpu.machineBusy === null ? '' : `, machine ${Math.round(m.cpu.machineBusy * 100)}% busy`;
  const loop = m.loopBusy === undefined ? '' : `, server loop ${Math.round(m.loopBusy * 100)}% busy`;
  const busy = `${machine}${loop}`;
  const rss = m.rss.peakMiB === null ? '' : `, peak RSS ${Math.round(m.rss.peakMiB)} MiB`;
  console.log(`${Math.round(m.reqPerSec)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${busy}${rss}`);
  return m;
}

/** Both figures of a case measured net of idle: the server's CPU per request as measured, and net of idle. */
function idleNote(m: Measurement): string {
  const { beforeUsPerSecond, afterUsPerSecond, netServerUs } = m.idle!;
  return (
    `server CPU ${m.cpu.server} µs/request as measured, ${netServerUs} µs net of the same process idle ` +
    `(${beforeUsPerSecond} µs/s before, ${afterUsPerSecond} after, over windows as long as the run; ` +
    'the lower one netted)'
  );
}

/** Endless round-robin over `items`, each made a body by `body`. */
function cycle(items: string[], body: (item: string) => string): () => string {
  let i = 0;
  return () => body(items[i++ % items.length]!);
}

/** Each of `items` sent once, in order (the last one again once they run out, which the note then says). */
function oneEach(items: string[], body: (item: string) => string, what: string) {
  let next = 0;
  return {
    body: () => body(items[Math.min(next++, items.length - 1)]!),
    used: () => Math.min(next, items.length),
    ranOut: () => next > items.length,
    note: () => (next > items.length ? `${what} ran out after ${items.length}` : undefined),
  };
}

/** Times `task` and prints how long it took after `what`. */
async function timed<T>(what: string, task: () => Promise<T>): Promise<T> {
  process.stdout.write(`   ${what} ... `);
  const started = performance.now();
  const value = await task();
  console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
  return value;
}

const tokenBody = (token: string) => JSON.stringify({ pass_token: token });

/** A baseline from koa-child.ts, sent the same requests as validate (body of a token's size). */
async function baselineCase(
  name: string,
  group: string,
  childEnv: Record<string, string>,
  parties: Parties,
): Promise<void> {
  const koa = await Child.start('./koa-child.ts', childEnv);
  const body = tokenBody(`pt_${randomBytes(96).toString('base64url')}`);
  try {
    const spec = {
      path: '/v1/validate',
      headers: { 'X-App-Key': 'ak_bench', 'X-App-Secret': 'sk_bench' },
      body: () => body,
    };
    await warmUp(koa, spec, warm);
    await run({ name, group, flow: 'baseline', server: 'koa' }, koa, spec, parties);
  } finally {
    await koa.stop();
  }
}

/** Whether --only selects this group of cases. */
function selected(label: string): boolean {
  return label.toLowerCase().includes(options.only);
}

/**
 * --cases: pairs [a case, a case that needs it]; `{L}` stands for the database label (PGlite, PostgreSQL).
 * A case is needed by another for its sizing (the prepared items of a fresh case are counted from the rate
 * of the case before it) or as the baseline of its goal's ratio.
 */
const CASE_DEPENDS: [string, string][] = [
  ['validate, used token ({L})', 'validate, fresh token ({L})'], // sizes its tokens
  ['validate, fresh token ({L})', 'validate, used token ({L})'], // the replay goal's baseline
  ['bare Koa + postgres.js UPDATE (PostgreSQL)', 'validate, fresh token (PostgreSQL)'], // the aim's floor
  ['challenge init, invisible tier ({L})', 'challenge submit, invisible tier ({L})'], // sizes it
  ['challenge init, invisible tier ({L})', 'challenge submit, wrong answer ({L})'], // sizes it
  ['challenge init, invisible tier ({L})', 'challenge init, slide tier ({L})'], // the image goal's baseline
  ['challenge init, slide tier ({L})', 'challenge init, invisible tier, at the image rate ({L})'], // its rate
  ['challenge init, invisible tier, at the image rate ({L})', 'challenge init, slide tier ({L})'], // its CPU's baseline
  ['challenge init (Cap)', 'challenge init, invisible tier (PostgreSQL)'], // the init goal's baseline
  ['validate, bystander idle ({L})', 'validate during a wrong-answer flood ({L})'], // the flood's baseline
  ['challenge init (Cap)', 'challenge submit (Cap)'], // sizes it
  ['validate, used token (Cap)', 'validate, fresh token (Cap)'], // sizes it
  ['validate, replayed payload (ALTCHA)', 'validate, fresh payload (ALTCHA)'], // sizes it
];

/** Whether the case labelled `name` runs: asked for by --cases (or no --cases), or needed by one that runs. */
function wanted(name: string, seen = new Set<string>()): boolean {
  if (options.cases.length === 0) return true;
  const lower = name.toLowerCase();
  if (options.cases.some((item) => lower.includes(item))) return true;
  seen.add(name);
  for (const [dependency, dependent] of CASE_DEPENDS) {
    for (const label of ['PGlite', 'PostgreSQL']) {
      const user = dependent.replace('{L}', label);
      if (dependency.replace('{L}', label) === name && !seen.has(user) && wanted(user, seen)) return true;
    }
  }
  return false;
}

/**
 * A case that uses each prepared item once (fresh tokens, payloads, solved challenges): enough for the case
 * at twice `rate` (an estimate: the used-token rate, the warm-up's); a run that runs out is redone once with
 * enough for three times the rate it reached.
 */
async function freshCase(
  meta: CaseMeta,
  child: Child,
  parties: Parties,
  fresh: {
    rate: number;
    what: string;
    prepare: (count: number) => Promise<string[]>;
    path: string;
    headers: Record<string, string>;
    body: (item: string) => string;
    note?: string;
    expect?: keyof Outcomes;
  },
): Promise<void> {
  let count = Math.ceil(Math.max(fresh.rate, 500) * options.durationSeconds * 2) + 1000;
  for (let attempt = 1; ; attempt++) {
    const items = await timed(`preparing ${count} ${fresh.what}`, () => fresh.prepare(count));
    const sent = oneEach(items, fresh.body, fresh.what);
    const spec = { path: fresh.path, headers: fresh.headers, body: sent.body };
    const m = await run(meta, child, spec, parties, {
      note: () => [fresh.note, sent.note()].filter(Boolean).join('; ') || undefined,
      ...(fresh.expect ? { expect: fresh.expect } : {}),
    });
    if (!sent.ranOut() || attempt === 2) break;
    results.pop(); // the rerun replaces it
    if (options.profile) profiles.pop();
    count = Math.ceil(m.reqPerSec * options.durationSeconds * 3) + 1000;
  }
}

/**
 * Submission of fresh solved challenges: a warm-up on a batch of its own, sized from the init rate, whose
 * consumption then sizes the measured run's batch (redemption is slower than creation, often much).
 */
async function submitCase(
  meta: CaseMeta,
  child: Child,
  parties: Parties,
  submit: {
    initRate: number;
    what: string;
    prepare: (count: number) => Promise<string[]>;
    path: string;
    headers: Record<string, string>;
    note: string;
    expect?: keyof Outcomes;
  },
): Promise<void> {
  const identity = (b: string) => b;
  let rate = submit.initRate;
  if (options.warmupSeconds > 0) {
    const count = Math.ceil(Math.max(submit.initRate, 200) * options.warmupSeconds * 1.5);
    const batch = await timed(`preparing ${count} ${submit.what} for the warm-up`, () =>
      submit.prepare(count),
    );
    const sent = oneEach(batch, identity, submit.what);
    await warmUp(child, { path: submit.path, headers: submit.headers, body: sent.body }, warm);
    if (!sent.ranOut()) rate = sent.used() / options.warmupSeconds;
  }
  await freshCase(meta, child, parties, { ...submit, rate, body: identity });
}

/** Validates each of `tokens` once through `api` (HTTP, 16 at a time), each expected valid. */
async function spend(api: Child, headers: Record<string, string>, tokens: string[]): Promise<void> {
  await pool(tokens.length, 16, async (i) => {
    const res = await fetch(`${api.url}/v1/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: tokenBody(tokens[i]!),
    });
    const answer = (await res.json()) as { data?: { valid?: boolean } };
    if (answer.data?.valid !== true) throw new Error(`spending a token: ${JSON.stringify(answer)}`);
  });
}

/** The cases apiCases runs on database `label` (their labels, as in the table). */
const apiCaseNames = (label: string) =>
  [
    'validate, used token',
    'validate, token used by another process',
    'validate, fresh token',
    'issue, enterprise plan',
    'challenge init, invisible tier',
    'challenge init, slide tier',
    'challenge init, invisible tier, at the image rate',
    'challenge submit, invisible tier',
    'challenge submit, invisible tier, real puzzle, flat out',
    'challenge submit, invisible tier, real puzzle',
    'challenge submit, wrong answer',
    'validate, bystander idle',
    'validate during a wrong-answer flood',
  ].map((name) => `${name} (${label})`);

/** The API on one database: validate with used tokens, with fresh tokens, then issue, init and submit. */
async function apiCases(label: string, apiEnv: Record<string, string>, parties: Parties): Promise<void> {
  if (!selected(label) || !apiCaseNames(label).some((name) => wanted(name))) return;
  section(`API on ${label}`);
  const api = await Child.start(API_CHILD, { ...apiEnv, ...API_ENV.env }, API_NODE_FLAGS);
  // On PostgreSQL the tokens and challenges are prepared by a second API process on the same database (same
  // keys), so the measured process's memory holds what serving costs, not the bench's prepared items. PGlite
  // lives inside the API process: there it prepares them itself.
  const prep = apiEnv.DATABASE_URL ? await Child.start(API_CHILD, apiEnv) : api;
  try {
    const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
    const headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };

    let usedRate = 0;
    if (wanted(`validate, used token (${label})`)) {
      // Replays of tokens this API process validated (each once, just before): what an attacker replaying
      // a token it saw accepted sends to the process that accepted it (one process, or a sticky balancer).
      const used = await prep.call<string[]>({ type: 'mint', appId: app.appId, count: 500, consume: false });
      await spend(api, headers, used);
      const usedSpec = { path: '/v1/validate', headers, body: cycle(used, tokenBody) };
      await warmUp(api, usedSpec, warm);
      const usedRun = await run(
        ours(`validate, used token (${label})`, label, 'validate'),
        api,
        usedSpec,
        parties,
        { note: () => 'replays of 500 tokens this API process validated once before the case' },
      );
      usedRate = usedRun.reqPerSec;
    }

    // Replays of tokens another process claimed (the bench's second API process, on the same database):
    // this process has no memory of them, so each goes to the database as a fresh validation does.
    if (prep !== api && wanted(`validate, token used by another process (${label})`)) {
      const elsewhere = await prep.call<string[]>({
        type: 'mint',
        appId: app.appId,
        count: 500,
        consume: true,
      });
      const elsewhereSpec = { path: '/v1/validate', headers, body: cycle(elsewhere, tokenBody) };
      await warmUp(api, elsewhereSpec, warm);
      await run(
        ours(`validate, token used by another process (${label})`, label, 'validate'),
        api,
        elsewhereSpec,
        parties,
        { note: () => "replays of 500 tokens the bench's other API process validated, on the same database" },
      );
    }

    if (wanted(`validate, fresh token (${label})`)) {
      await freshCase(ours(`validate, fresh token (${label})`, label, 'validate'), api, parties, {
        rate: usedRate,
        what: 'pass tokens',
        prepare: (count) => prep.call<string[]>({ type: 'mint', appId: app.appId, count, consume: false }),
        path: '/v1/validate',
        headers,
        body: tokenBody,
      });
    }

    if (wanted(`issue, enterprise plan (${label})`)) await issueCase(label, api, headers, parties);
    await challengeCases(label, api, prep, parties);
  } finally {
    if (prep !== api) await prep.stop();
    await api.stop();
  }
}

/** Issue on the enterprise plan; measured on a second app, so the warm-up has not drawn on its bucket. */
async function issueCase(label: string, api: Child, warmHeaders: Record<string, string>, parties: Parties) {
  const body = () => '{"action":"login"}';
  await warmUp(api, { path: '/v1/server/challenge/issue', headers: warmHeaders, body }, warm);
  const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
  const headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
  await run(
    ours(`issue, enterprise plan (${label})`, label, 'issue'),
    api,
    { path: '/v1/server/challenge/issue', headers, body },
    parties,
  );
}

/**
 * The end-user half: initialization (invisible tier: quota count, risk score, puzzle, seal; and the slide
 * tier, which draws an image too) and submission of solved challenges (open, attempt row, proof-of-work
 * check, mark solved, mint). Submissions need fresh solved challenges, prepared in the API process first;
 * the warm-up gets its own.
 */
async function challengeCases(label: string, api: Child, prep: Child, parties: Parties) {
  const signals = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };
  for (const tier of ['invisible-test-mode', 'slide'] as const) {
    const name = `challenge init, ${tier === 'slide' ? 'slide tier' : 'invisible tier'} (${label})`;
    let initRate = 0;
    if (wanted(name)) {
      const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise', challenge: tier });
      const body = JSON.stringify({ app_key: app.appKey, action: 'login', signals });
      const spec = { path: '/v1/challenge/init', headers: {}, body: () => body };
      await warmUp(api, spec, warm);
      const m = await run(ours(name, label, 'init'), api, spec, parties, {
        note: () => (tier === 'slide' ? undefined : 'test-mode app'),
      });
      initRate = m.reqPerSec;
    }
    if (tier === 'slide') {
      await invisibleAtImageRate(label, api, parties, signals, initRate);
      continue;
    }
    if (wanted(`challenge submit, invisible tier (${label})`)) {
      const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise', challenge: tier });
      await submitCase(ours(`challenge submit, invisible tier (${label})`, label, 'submit'), api, parties, {
        initRate,
        what: 'solved challenges',
        prepare: async (count) =>
          (await prep.call<SolvedChallenges>({ type: 'solved-challenges', appKey: app.appKey, count }))
            .bodies,
        path: '/v1/challenge/submit',
        headers: {},
        note: 'test-mode app: a one-hash puzzle (Argon2id, 8 KiB) any nonce solves',
      });
    }
    const realPuzzle = (suffix: string) =>
      wanted(`challenge submit, invisible tier, real puzzle${suffix} (${label})`);
    if (
      (options.realPuzzle ?? options.peers) &&
      label === 'PostgreSQL' &&
      (realPuzzle('') || realPuzzle(', flat out'))
    ) {
      await realPuzzleCase(label, api, prep, parties);
    }
    await wrongAnswerCases(label, api, prep, parties, initRate);
  }
}

/**
 * The invisible init paced at the rate the slide case's image inits were served (drawing bound). A process
 * serving a few hundred requests a second does per request what a busy one shares across a batch (a quota
 * statement, a log flush, an event-loop turn), so the image init's CPU is compared with this case's, not with
 * the invisible init flat out: what is left between them is what the image itself costs the request path.
 */
async function invisibleAtImageRate(
  label: string,
  api: Child,
  parties: Parties,
  signals: object,
  imageRate: number,
): Promise<void> {
  const name = `challenge init, invisible tier, at the image rate (${label})`;
  if (!wanted(name) || imageRate <= 0) return;
  const rate = Math.max(1, Math.round(imageRate));
  const app = await api.call<CreatedApp>({
    type: 'create-app',
    plan: 'enterprise',
    // Not a test-mode app (whose puzzle is trivial) and not the default policy (which serves these bench
    // requests images): the slide case's policy with every score in the invisible tier.
    challenge: 'invisible-forced',
  });
  const body = JSON.stringify({ app_key: app.appKey, action: 'login', signals });
  const spec = { path: '/v1/challenge/init', headers: {}, body: () => body };
  await warmUp(api, spec, warm);
  // Paced (one request every 1/rate s), not autocannon's rate, which sends each second's share at its top: a
  // burst that batches as the image inits, answered one at a time as drawings arrive, never do.
  process.stdout.write(`   ${name} ... `);
  const amount = Math.ceil(rate * options.durationSeconds);
  const m = combine([
    await pacedSegment(api, spec, { connections: load.connections, rate, amount }, parties),
  ]);
  results.push({
    ...ours(name, label, 'init'),
    pacedPerSec: rate,
    m,
    note: `an app of the slide case's plan and policy, invisible tier, paced at ${rate}/s: the slide case's rate`,
  });
  console.log(`${Math.round(m.reqPerSec)} req/s, server CPU ${m.cpu.server} µs per init`);
}

/**
 * The bystander: an integrator's light validate traffic, idle and under a flood, paced (load.ts, paced():
 * one request every 1/rate s, each timed alone to the microsecond). BYSTANDER_SAMPLES a side, so the p99 is
 * the 10th-slowest answer rather than (at 250 autocannon samples, with its coordinated-omission fill-in of
 * 1 ms steps below each slow answer) whichever single answer was slowest; and the two sides interleaved in
 * BYSTANDER_ROUNDS rounds (idle then flood, flood then idle, ...), so that the machine's other work, which
 * on a shared machine moves the p99 more than anything measured, weighs on both sides alike. A side takes
 * BYSTANDER_SAMPLES / rate seconds whatever --duration says.
 */
const BYSTANDER_SAMPLES = 1_000;
const BYSTANDER_ROUNDS = 5;
const BYSTANDER = { connections: 2, rate: 100 };
/**
 * The flood: wrong submits at a bounded rate, paced too, so every run floods alike (wrong answers must not
 * starve a bystander, and an unpaced flood would measure the client instead), from FLOOD_LEAD_MS before
 * each flood segment's first bystander request to its last answer.
 */
const FLOOD = { connections: 8, rate: 200 };
const FLOOD_LEAD_MS = 300;

/**
 * What an attacker sends for free: `challenge submit, wrong answer`, fresh challenges of the
 * default policy with a malformed proof-of-work, at full speed; then `validate during a wrong-answer
 * flood`, a bystander's validations at BYSTANDER's rate beside FLOOD's wrong submits, next to the same
 * bystander on an idle server (`validate, bystander idle`), for its p50 and p99 (bystanderCases).
 */
async function wrongAnswerCases(label: string, api: Child, prep: Child, parties: Parties, initRate: number) {
  const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise', challenge: 'invisible' });
  const wrong = (count: number) => prep.call<string[]>({ type: 'wrong-submits', appKey: app.appKey, count });
  if (wanted(`challenge submit, wrong answer (${label})`)) {
    await submitCase(ours(`challenge submit, wrong answer (${label})`, label, 'submit'), api, parties, {
      initRate,
      what: 'challenges answered wrong',
      prepare: wrong,
      path: '/v1/challenge/submit',
      headers: {},
      note: 'fresh challenges of the default policy, proof-of-work malformed: refused before any hash',
    });
  }
  if (wanted(`validate, bystander idle (${label})`)) await bystanderCases(label, api, prep, parties, wrong);
}

/** Adds up the watches of a side's segments: the worst segment's delay p99, the longest delay and pause. */
function mergeWatches(watches: LoopWatch[]): LoopWatch {
  const max = (pick: (w: LoopWatch) => number) => Math.max(0, ...watches.map(pick));
  const sum = (pick: (w: LoopWatch) => number) => watches.reduce((a, w) => a + pick(w), 0);
  return {
    delay: { p50: max((w) => w.delay.p50), p99: max((w) => w.delay.p99), max: max((w) => w.delay.max) },
    gc: {
      count: sum((w) => w.gc.count),
      totalMs: Math.round(sum((w) => w.gc.totalMs) * 100) / 100,
      maxMs: max((w) => w.gc.maxMs),
      major: sum((w) => w.gc.major),
      majorMs: Math.round(sum((w) => w.gc.majorMs) * 100) / 100,
    },
    claims: {
      statements: sum((w) => w.claims.statements),
      claims: sum((w) => w.claims.claims),
      roundTripMs: Math.round(sum((w) => w.claims.roundTripMs) * 100) / 100,
      slowestMs: max((w) => w.claims.slowestMs),
    },
  };
}

/**
 * `validate, bystander idle` and `validate during a wrong-answer flood`, interleaved (BYSTANDER_ROUNDS),
 * each side with what the API's event loop and garbage collector did meanwhile (api-child.ts, `watch-start`).
 */
async function bystanderCases(
  label: string,
  api: Child,
  prep: Child,
  parties: Parties,
  wrong: (count: number) => Promise<string[]>,
): Promise<void> {
  const withFlood = wanted(`validate during a wrong-answer flood (${label})`);
  const owner = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
  const headers = { 'X-App-Key': owner.appKey, 'X-App-Secret': owner.appSecret };
  const perSegment = Math.ceil(BYSTANDER_SAMPLES / BYSTANDER_ROUNDS);
  const warmCount = Math.ceil(BYSTANDER.rate * options.warmupSeconds);
  const tokens = await prep.call<string[]>({
    type: 'mint',
    appId: owner.appId,
    count: perSegment * BYSTANDER_ROUNDS * 2 + warmCount,
    consume: false,
  });
  let nextToken = 0;
  const bystander = (count: number) => {
    const items = tokens.slice(nextToken, nextToken + count);
    nextToken += count;
    return { path: '/v1/validate', headers, body: oneEach(items, tokenBody, 'pass tokens').body };
  };
  const segmentSeconds = perSegment / BYSTANDER.rate;
  const floodPerSegment = Math.ceil(FLOOD.rate * (segmentSeconds + FLOOD_LEAD_MS / 1000 + 0.5));
  const floodBodies = withFlood
    ? await timed('preparing the flood', () => wrong(floodPerSegment * BYSTANDER_ROUNDS + 200))
    : [];
  const flood = oneEach(floodBodies, (body) => body, 'flood challenges');
  const floodSpec = { path: '/v1/challenge/submit', headers: {}, body: flood.body };

  if (warmCount > 0) await paced(api.url, bystander(warmCount), { ...BYSTANDER, amount: warmCount });
  const sides = { idle: [] as Segment[], flood: [] as Segment[] };
  const watches = { idle: [] as LoopWatch[], flood: [] as LoopWatch[] };
  let floodSent = 0;
  process.stdout.write(`   bystander, ${BYSTANDER_ROUNDS} rounds of ${perSegment} a side ... `);
  for (let round = 0; round < BYSTANDER_ROUNDS; round++) {
    const order: ('idle' | 'flood')[] = !withFlood
      ? ['idle']
      : round % 2
        ? ['flood', 'idle']
        : ['idle', 'flood'];
    for (const side of order) {
      const spec = bystander(perSegment);
      let flooding: Promise<number> | undefined;
      let stopFlood = () => {};
      if (side === 'flood') {
        const stopped = new Promise<void>((resolve) => {
          stopFlood = resolve;
        });
        flooding = pacedUntil(api.url, floodSpec, { ...FLOOD, amount: floodPerSegment }, stopped);
        await new Promise((resolve) => setTimeout(resolve, FLOOD_LEAD_MS));
      }
      await api.call({ type: 'watch-start' });
      sides[side].push(await pacedSegment(api, spec, { ...BYSTANDER, amount: perSegment }, parties));
      watches[side].push(await api.call<LoopWatch>({ type: 'watch-stop' }));
      stopFlood();
      if (flooding) floodSent += await flooding;
    }
  }
  console.log('done');

  const watchText = (w: LoopWatch) =>
    `API event loop delay (worst segment) p50 ${w.delay.p50} · p99 ${w.delay.p99} ms, longest ${w.delay.max} ms; ` +
    `${w.gc.count} GC pauses, ${w.gc.totalMs} ms in all, longest ${w.gc.maxMs} ms ` +
    `(${w.gc.major} of them mark-compact or incremental marking, ${w.gc.majorMs} ms); ` +
    `${w.claims.claims} claims in ${w.claims.statements} statements, round trip mean ` +
    `${(w.claims.roundTripMs / Math.max(1, w.claims.statements)).toFixed(2)} ms, longest ${w.claims.slowestMs} ms`;
  const described = (m: Measurement) =>
    `${m.requests} fresh validations paced at ${BYSTANDER.rate}/s over ${BYSTANDER.connections} connections, ` +
    `${BYSTANDER_ROUNDS} segments interleaved with the other side's: p99.9 ${m.p999} ms, slowest ${m.max} ms`;
  const record = (name: string, side: 'idle' | 'flood', extra: string[]) => {
    const m = combine(sides[side]);
    const note = [described(m), ...extra, watchText(mergeWatches(watches[side]))].join('; ');
    results.push({ ...ours(name, label, 'validate'), pacedPerSec: BYSTANDER.rate, m, note });
    console.log(`   ${name}: p50 ${m.p50} ms, p99 ${m.p99} ms, p99.9 ${m.p999} ms (${m.requests} answers)`);
    return m;
  };
  const idleM = record(`validate, bystander idle (${label})`, 'idle', []);
  if (!withFlood) return;
  const floodM = record(`validate during a wrong-answer flood (${label})`, 'flood', [
    `beside ${FLOOD.rate} wrong submits/s paced over ${FLOOD.connections} connections, from ${FLOOD_LEAD_MS} ms ` +
      `before each segment to its end (${floodSent} sent; server CPU per request counts the flood too)`,
    ...[flood.note()].filter((n): n is string => Boolean(n)),
  ]);
  console.log(
    `   bystander p50 ${idleM.p50} → ${floodM.p50} ms, p99 ${idleM.p99} → ${floodM.p99} ms ` +
      `(${(floodM.p99 / Math.max(idleM.p99, 0.001)).toFixed(2)}× idle; goal ≤ 2×); flood sent ${floodSent}`,
  );
}

/**
 * Submission at our real default difficulty: an app that is not in test mode, challenges initialized as a
 * desktop Chrome would, so each carries the puzzle the default policy sets for an ordinary visitor (scrypt,
 * 512 KiB, several sub-puzzles), solved for real. The API offers no way to keep the algorithm, the memory and
 * the number of sub-puzzles while easing the target (the score alone chooses the puzzle), so the bench
 * solves them at the real target: about 300 times the work of verifying them (one spot-checked hash), and
 * they expire 120 s after their init. A run of several seconds flat out would need thousands, minutes of CPU
 * to prepare; so the case is measured twice, each on a batch solved just before it:
 * - `…, real puzzle, flat out`: a burst of REAL_PUZZLE_BURST submits as fast as answered (autocannon's
 *   `amount`), as every other cost goal is measured; the proof-of-work goal judges this one. Fewer on a machine
 *   that solves too slowly to prepare 320 in time; at 1-1.5 ms each the /proc tick (10 ms) is within ±2-3%
 *   of the CPU measured at 320, ±5% at 150.
 * - `…, real puzzle`: REAL_PUZZLE_LOAD's fixed 50/s for the run's duration (shorter when the machine solves
 *   too slowly to prepare that many in time), a light integrator's rate. At 50
 *   requests a second the process's own background work (timers, flushes, metrics) weighs on each request,
 *   so it is also given net of the same process idle over equal windows (load.ts, measureNetOfIdle), the one
 *   before taken while the batch was being solved in the other process.
 */
const REAL_PUZZLE_LOAD = { connections: 2, rate: 50 };
const REAL_PUZZLE_BURST = 320;
/** Seconds of solving each batch may take: its first challenge must still be alive when the batch is used. */
const REAL_PUZZLE_SOLVING = 80;
async function realPuzzleCase(label: string, api: Child, prep: Child, parties: Parties) {
  const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise', challenge: 'invisible' });
  const solve = (count: number) =>
    prep.call<SolvedChallenges>({ type: 'solved-challenges', appKey: app.appKey, count, browser: true });
  const submitSpec = (bodies: string[]) => {
    const sent = oneEach(bodies, (b) => b, 'challenges');
    return { spec: { path: '/v1/challenge/submit', headers: {}, body: sent.body }, sent };
  };
  const connections = options.connections;
  const warmCount = Math.max(connections, Math.ceil(REAL_PUZZLE_LOAD.rate * options.warmupSeconds));
  const warmBatch = await timed(
    `solving ${warmCount} challenges at the default difficulty to warm up`,
    async () => {
      const started = performance.now();
      const solved = await solve(warmCount);
      return { ...solved, seconds: (performance.now() - started) / 1000 };
    },
  );
  const pow = warmBatch.pow!;
  const puzzle =
    `default policy, desktop Chrome: ${pow.algorithm} ${pow.memoryKiB} KiB, ${pow.count} sub-puzzles ` +
    `× ${Math.round(2 ** 32 / pow.target)} hashes to solve, one (spot-checked) to verify`;
  // The spot check's path (a native hash on the thread pool) warmed up like every other case's.
  if (options.warmupSeconds > 0) {
    await warmUp(api, submitSpec(warmBatch.bodies).spec, {
      connections,
      durationSeconds: options.warmupSeconds,
      amount: Math.floor(warmCount / connections) * connections,
    });
  }

  // Sized by how fast this machine solved the warm-up batch, so that each batch is solved in REAL_PUZZLE_SOLVING
  // seconds and used before its first challenge expires (120 s after its init), however busy the machine is.
  const fits = Math.floor((warmCount / warmBatch.seconds) * REAL_PUZZLE_SOLVING);
  const amount = Math.max(
    connections,
    Math.floor(Math.min(REAL_PUZZLE_BURST, fits) / connections) * connections,
  );
  if (wanted(`challenge submit, invisible tier, real puzzle, flat out (${label})`)) {
    const burst = submitSpec((await timed(`solving ${amount}`, () => solve(amount))).bodies);
    // A burst of a few hundred is short: the process's own count (µs, its pool threads included) beside
    // /proc's, whose 10 ms tick weighs ±10 ms over the burst.
    const cpu = () => api.call<NodeJS.CpuUsage>({ type: 'cpu' }).then((c) => c.user + c.system);
    const cpuBefore = await cpu();
    await run(
      ours(`challenge submit, invisible tier, real puzzle, flat out (${label})`, label, 'submit'),
      api,
      burst.spec,
      parties,
      {
        load: { amount },
        note: () =>
          [`a burst of ${amount} submits as fast as answered; ${puzzle}`, burst.sent.note()]
            .filter(Boolean)
            .join('; '),
      },
    );
    const precise = Math.round(((await cpu()) - cpuBefore) / amount);
    const burstResult = results.at(-1)!;
    burstResult.note = `${burstResult.note}; ${precise} µs of API CPU per submit by its process.cpuUsage`;
  }
  if (!wanted(`challenge submit, invisible tier, real puzzle (${label})`)) return;

  const { rate } = REAL_PUZZLE_LOAD;
  const slowWanted = rate * options.durationSeconds;
  const slowCount = Math.max(rate, Math.floor(Math.min(slowWanted, fits) / 2) * 2);
  const seconds = slowCount / rate;
  // The API is idle while the other process solves: its idle CPU is measured then, a few seconds in.
  const idleBefore = new Promise<void>((resolve) => setTimeout(resolve, 3000)).then(() =>
    idleCpu(api, seconds + 0.1),
  );
  const slow = submitSpec((await timed(`solving ${slowCount}`, () => solve(slowCount))).bodies);
  await run(
    {
      ...ours(`challenge submit, invisible tier, real puzzle (${label})`, label, 'submit'),
      pacedPerSec: rate,
    },
    api,
    slow.spec,
    parties,
    {
      load: { ...REAL_PUZZLE_LOAD, amount: slowCount, durationSeconds: seconds },
      netOfIdle: { idleBefore },
      note: () =>
        [`${rate} submits/s for ${seconds.toFixed(1)} s; ${puzzle}`, slow.sent.note()]
          .filter(Boolean)
          .join('; '),
    },
  );
}

/** Only the issue case, with the limiter's buckets in Redis. */
async function redisIssueCase(
  label: string,
  apiEnv: Record<string, string>,
  parties: Parties,
): Promise<void> {
  section(`API on ${label}`);
  const api = await Child.start(API_CHILD, { ...apiEnv, ...API_ENV.env }, API_NODE_FLAGS);
  try {
    const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
    await issueCase(label, api, { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret }, parties);
  } finally {
    await api.stop();
  }
}

/**
 * The peers (peer-child.ts) on the same PostgreSQL, each flow beside ours: Cap's challenge, redemption and
 * token validation; ALTCHA's challenge and the integrator's check of its payload (ALTCHA has no submit).
 */
async function peerCases(label: string, childEnv: Record<string, string>, parties: Parties): Promise<void> {
  const names = [
    'challenge init (Cap)',
    'challenge init (ALTCHA)',
    'challenge submit (Cap)',
    'validate, used token (Cap)',
    'validate, fresh token (Cap)',
    'validate, replayed payload (ALTCHA)',
    'validate, fresh payload (ALTCHA)',
  ];
  if (!names.some((name) => wanted(name))) return;
  section(`Peers on ${label}: Cap (@cap.js/server 4.0.5), ALTCHA (altcha-lib 2.8.0)`);
  const peers = await Child.start('./peer-child.ts', childEnv);
  const meta = (name: string, flow: Flow, server: Server): CaseMeta => ({ name, group: label, flow, server });
  const json = { 'content-type': 'application/json' };
  try {
    let capInitRate = 0;
    if (wanted('challenge init (Cap)')) {
      const capInit = { path: '/cap/challenge', headers: {}, body: () => '{}' };
      await warmUp(peers, capInit, warm);
      const capInitRun = await run(meta('challenge init (Cap)', 'init', 'cap'), peers, capInit, parties, {
        note: () => "createChallenge at Cap's defaults (c=50, s=32, d=4): random token, one INSERT",
      });
      capInitRate = capInitRun.reqPerSec;
    }

    if (wanted('challenge init (ALTCHA)')) {
      const altchaInit = { path: '/altcha/challenge', headers: {}, body: () => '{}' };
      await warmUp(peers, altchaInit, warm);
      await run(meta('challenge init (ALTCHA)', 'init', 'altcha'), peers, altchaInit, parties, {
        note: () =>
          'createChallenge as its README: one PBKDF2-SHA-256 × 5000 (the known counter), two HMACs, no storage',
      });
    }

    if (wanted('challenge submit (Cap)')) {
      await submitCase(meta('challenge submit (Cap)', 'submit', 'cap'), peers, parties, {
        initRate: capInitRate,
        what: 'Cap challenges (difficulty 1)',
        prepare: (count) => peers.call<string[]>({ type: 'cap-solved', count }),
        path: '/cap/redeem',
        headers: json,
        note:
          'redeemChallenge: claim the challenge, 50 SHA-256, INSERT a token; prepared at d=1, not 4 ' +
          '(same c and s: the same 50 hashes to verify)',
        expect: 'accepted',
      });
    }
    if (wanted('challenge submit (ALTCHA)')) {
      results.push({
        ...meta('challenge submit (ALTCHA)', 'submit', 'altcha'),
        skipped:
          'not applicable: ALTCHA has no submit step, the payload goes with the form to the integrator (validate)',
      });
    }

    const capBody = (token: string) => JSON.stringify({ token });
    let capUsedRate = 0;
    if (wanted('validate, used token (Cap)')) {
      const capUsed = await peers.call<string[]>({ type: 'cap-tokens', count: 500, consume: true });
      const capUsedSpec = { path: '/cap/validate', headers: json, body: cycle(capUsed, capBody) };
      await warmUp(peers, capUsedSpec, warm);
      const capUsedRun = await run(
        meta('validate, used token (Cap)', 'validate', 'cap'),
        peers,
        capUsedSpec,
        parties,
        {
          expect: 'rejected',
          note: () => 'validateToken: one SHA-256, its row already claimed',
        },
      );
      capUsedRate = capUsedRun.reqPerSec;
    }
    if (wanted('validate, fresh token (Cap)')) {
      await freshCase(meta('validate, fresh token (Cap)', 'validate', 'cap'), peers, parties, {
        rate: capUsedRate,
        what: 'Cap tokens',
        prepare: (n) => peers.call<string[]>({ type: 'cap-tokens', count: n, consume: false }),
        path: '/cap/validate',
        headers: json,
        body: capBody,
        note: 'validateToken: one SHA-256, claim its row (DELETE … RETURNING); no app authentication',
        expect: 'accepted',
      });
    }

    const altchaBody = (payload: string) => JSON.stringify({ altcha: payload });
    let replayRate = 0;
    if (wanted('validate, replayed payload (ALTCHA)')) {
      const replayed = await peers.call<string[]>({ type: 'altcha-payloads', count: 500, consume: true });
      const replaySpec = { path: '/altcha/verify', headers: json, body: cycle(replayed, altchaBody) };
      await warmUp(peers, replaySpec, warm);
      const replayRun = await run(
        meta('validate, replayed payload (ALTCHA)', 'validate', 'altcha'),
        peers,
        replaySpec,
        parties,
        { expect: 'rejected', note: () => 'verifySolution passes, the INSERT finds its signature' },
      );
      replayRate = replayRun.reqPerSec;
    }
    if (wanted('validate, fresh payload (ALTCHA)')) {
      await freshCase(meta('validate, fresh payload (ALTCHA)', 'validate', 'altcha'), peers, parties, {
        rate: replayRate,
        what: 'ALTCHA payloads',
        prepare: (n) => peers.call<string[]>({ type: 'altcha-payloads', count: n, consume: false }),
        path: '/altcha/verify',
        headers: json,
        body: altchaBody,
        note:
          "integrator's check: verifySolution (two HMACs; the key signature spares PBKDF2), INSERT of the " +
          'signature ON CONFLICT DO NOTHING; no app authentication',
        expect: 'accepted',
      });
    }
  } finally {
    await peers.stop();
  }
}

async function postgresReachable(url: string) {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    const [row] = await sql`select version() as version, current_setting('fsync') as fsync,
      current_setting('synchronous_commit') as sync, current_setting('shared_buffers') as buffers`;
    return `${String(row!.version).split(' on ')[0]} (fsync ${row!.fsync}, synchronous_commit ${row!.sync}, shared_buffers ${row!.buffers})`;
  } catch {
    return undefined;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function redisReachable(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function profileText(): string {
  if (profiles.length === 0) return '';
  const parts = ['Profiles (API process, self time, sampled during the measured run):'];
  for (const { name, summary } of profiles) {
    const share = (ms: number) => `${Math.round((ms / Math.max(1, summary.totalMs)) * 100)}%`;
    parts.push(
      '',
      `- ${name}, ${summary.totalMs} ms sampled. By package: ${summary.byCategory
        .slice(0, 10)
        .map((c) => `${c.name} ${share(c.ms)}`)
        .join(', ')}.`,
      `  Top functions: ${summary.byFunction
        .slice(0, 10)
        .map((f) => `\`${f.name}\` ${share(f.ms)}`)
        .join(', ')}.`,
    );
  }
  return parts.join('\n');
}

async function main(): Promise<void> {
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const base = { LOG_LEVEL: options.logLevel, DATA_DIR: scratch };
  // A folder of this run's own (benches run side by side must not rebuild each other's children).
  mkdirSync(join(import.meta.dirname, 'dist'), { recursive: true });
  const bundle = options.sources ? undefined : mkdtempSync(join(import.meta.dirname, 'dist', 'run-'));
  if (bundle) {
    await buildServer(bundle, { 'api-child': join(import.meta.dirname, 'api-child.ts') });
    API_CHILD = `./${relative(import.meta.dirname, bundle)}/api-child.js`;
  }
  console.log(
    `Gatehouse bench: ${options.durationSeconds} s per case, ${options.connections} connections, ` +
      `${options.warmupSeconds} s warm-up${options.profile ? ', profiling' : ''}${options.peers ? ', peers' : ''}`,
  );
  console.log(API_ENV.note);

  section('bare Koa (baseline)');
  await baselineCase('bare Koa, JSON answer', 'bare Koa', {}, {});

  await apiCases('PGlite', { ...base, PGLITE_DIR: join(scratch, 'pgdata') }, {});

  const wantPostgres = selected('PostgreSQL') || selected('PostgreSQL + Redis limiter');
  const pgInfo = wantPostgres ? await postgresReachable(options.postgresUrl) : 'not run (--only)';
  let dropDatabase: (() => Promise<void>) | undefined;
  if (pgInfo && wantPostgres) {
    const name = `gh_bench_${randomBytes(4).toString('hex')}`;
    const admin = postgres(options.postgresUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    dropDatabase = async () => {
      const again = postgres(options.postgresUrl, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    };
    const url = new URL(options.postgresUrl);
    url.pathname = `/${name}`;
    try {
      if (selected('PostgreSQL') && wanted('bare Koa + postgres.js UPDATE (PostgreSQL)')) {
        section('bare Koa + one postgres.js UPDATE (the floor for a validation)');
        await baselineCase(
          'bare Koa + postgres.js UPDATE (PostgreSQL)',
          'PostgreSQL',
          { DATABASE_URL: url.toString() },
          { postgresDatabase: name },
        );
      }
      await apiCases('PostgreSQL', { ...base, DATABASE_URL: url.toString() }, { postgresDatabase: name });
      if (options.peers && selected('PostgreSQL')) {
        await peerCases('PostgreSQL', { DATABASE_URL: url.toString() }, { postgresDatabase: name });
      }
      if (!wanted('issue, enterprise plan (PostgreSQL + Redis limiter)')) {
        // not asked for (--cases)
      } else if (await redisReachable(options.redisUrl)) {
        await redisIssueCase(
          'PostgreSQL + Redis limiter',
          { ...base, DATABASE_URL: url.toString(), REDIS_URL: options.redisUrl },
          { postgresDatabase: name, redis: true },
        );
      } else {
        console.warn(`\n!!! Redis not reachable at ${options.redisUrl}: the Redis limiter case is skipped`);
        const label = 'PostgreSQL + Redis limiter';
        results.push({
          ...ours(`issue, enterprise plan (${label})`, label, 'issue'),
          skipped: 'Redis not reachable',
        });
      }
    } finally {
      await dropDatabase();
    }
  } else if (wantPostgres) {
    console.warn(`\n!!! PostgreSQL not reachable at ${options.postgresUrl}: its cases are skipped`);
    const skipped = [
      ours('validate, used token (PostgreSQL)', 'PostgreSQL', 'validate'),
      ours('validate, fresh token (PostgreSQL)', 'PostgreSQL', 'validate'),
      ours('issue, enterprise plan (PostgreSQL)', 'PostgreSQL', 'issue'),
    ];
    for (const meta of skipped) results.push({ ...meta, skipped: 'PostgreSQL not reachable' });
  }
  rmSync(scratch, { recursive: true, force: true });
  if (bundle) rmSync(bundle, { recursive: true, force: true });

  // With the peers, each flow's rows together (ours first); without, the order the cases ran in, as before.
  const shown = options.peers ? byFlow(results) : results;
  const koaResult = results.find((r) => r.group === 'bare Koa')?.m;
  const table = rows(shown, availableParallelism());
  printTable(table);
  const verdict = `${verdictText(koaResult)}\n\n${goalsText()}`;
  console.log(`\n${verdict}`);
  const profileSummary = profileText();
  if (profileSummary) console.log(`\n${profileSummary}`);

  const args = process.argv.slice(2);
  const info: RunInfo = {
    command:
      env.npm_lifecycle_event === 'bench'
        ? `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`
        : `node loadtest/bench/run.ts ${args.join(' ')}`.trim(),
    date,
    machine:
      `nproc ${availableParallelism()}, ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `Linux ${release()}, load average ${loadBefore} before the run and ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} after (other work on the machine competes)`,
    node: `Node ${process.version}`,
    postgres: pgInfo ? `${pgInfo}, on the same machine` : 'not reachable',
    settings:
      `${options.durationSeconds} s per case after ${options.warmupSeconds} s warm-up, ${options.connections} connections, ` +
      `autocannon 9 in the bench process, each server in its own child process, API LOG_LEVEL=${options.logLevel} ` +
      `(to /dev/null), DB_POOL_MAX 10, PGlite on disk in a temporary folder, ` +
      (options.sources
        ? 'API from its TypeScript sources (--sources)'
        : 'API bundled as the container runs it (api/scripts/build-server.ts)') +
      `, API node flags ${API_NODE_FLAGS.join(' ') || 'none'}` +
      `, ${API_ENV.note}` +
      (options.peers ? ', peers in one child process with a postgres.js pool of 10' : '') +
      (options.profile ? ', profiler on for the profiled runs' : ''),
  };
  if (options.json) {
    const { durationSeconds, connections, warmupSeconds, profile, peers, only, cases, write, sources } =
      options;
    const settings = {
      durationSeconds,
      connections,
      warmupSeconds,
      profile,
      peers,
      only,
      cases: cases.join('|'),
      write,
      sources,
    };
    writeJson(options.json, { ...info, options: settings }, shown, verdict);
    console.log(`\nwrote ${resolve(options.json)}`);
  }
  if (options.write) {
    writeDocs(DOCS, describeRun(info, table, verdict, profileSummary));
    console.log(`\nwrote ${DOCS}`);
  }
}

/**
 * What the API process itself spent per image init (its renderers left out) beside an invisible init: the
 * request path's cost when drawing is off it, which the served rate, bound by drawing, does not show.
 */
function apiAlone(image: Measurement, invisible: Measurement): string {
  const own = image.cpu.serverOwn;
  if (own == null || invisible.cpu.server === null) return '';
  const rate = Math.round(invisible.reqPerSec);
  return `; the API alone ${own} µs of CPU per image init, ${invisible.cpu.server} per invisible init at ${rate}/s`;
}

/**
 * The API's goals, each judged by this run alone as a ratio or a cost measured in it: met, NOT met, or not
 * measured (a case absent, e.g. the peers without --peers). CPU figures are the API process's µs per request.
 */
function goalsText(label = 'PostgreSQL'): string {
  const m = (name: string) => results.find((r) => r.name === name)?.m;
  const lines: string[] = [];
  const judge = (goal: string, value: string | undefined, met: boolean | undefined) =>
    lines.push(`- ${goal}: ${value === undefined ? 'not measured' : `${value}: ${met ? 'met' : 'NOT met'}`}`);
  const ratio = (a?: Measurement, b?: Measurement) => (a && b ? a.reqPerSec / b.reqPerSec : undefined);
  const at = (name: string) => m(`${name} (${label})`);
  const invisible = at('challenge init, invisible tier');
  const capInit = m('challenge init (Cap)');
  const r1 = ratio(invisible, capInit);
  judge(
    "challenge init, invisible tier ≥ 1.0× Cap's init",
    r1?.toFixed(2).concat('×'),
    r1 !== undefined && r1 >= 1,
  );
  // Judged on challenges served (2xx), not on answers: a shed init (503 while the pool refills) is cheap and
  // fast, and counting it would flatter the image tier.
  const slide = at('challenge init, slide tier');
  const served = (x: Measurement) => (x.reqPerSec * (x.statuses['200'] ?? 0)) / Math.max(1, x.requests);
  const r2 = slide && invisible ? served(slide) / invisible.reqPerSec : undefined;
  const shed = slide ? (slide.statuses['503'] ?? 0) : 0;
  judge(
    'image challenge init ≥ 0.5× the invisible init (challenges served)',
    r2 === undefined
      ? undefined
      : `${r2.toFixed(2)}× (${Math.round(served(slide!))} served/s` +
          `${shed ? `, ${Math.round((shed / slide!.requests) * 100)}% of inits shed with 503` : ''}` +
          `${apiAlone(slide!, at('challenge init, invisible tier, at the image rate') ?? invisible!)})`,
    r2 !== undefined && r2 >= 0.5,
  );
  // Judged on the burst flat out, as the other cost goals are; the fixed-rate case's figures, as measured and
  // net of the process idle, are said beside it. A run whose challenges ran out or were refused (expired
  // before use) measured cheap refusals, not verifications: not judged.
  const realCase = (suffix: string) =>
    results.find((r) => r.name === `challenge submit, invisible tier, real puzzle${suffix} (${label})`);
  const allRight = (r?: CaseResult) =>
    r?.m && !r.note?.includes('ran out') && (r.m.statuses['200'] ?? 0) === r.m.requests ? r.m : undefined;
  const burst = realCase(', flat out');
  const burstM = allRight(burst);
  const slowM = allRight(realCase(''));
  const real = burstM?.cpu.server ?? undefined;
  const slowText = slowM?.idle
    ? `; at 50/s: ${slowM.cpu.server} µs, ${slowM.idle.netServerUs} µs net of the process idle`
    : '';
  judge(
    'proof-of-work submit ≤ 1 ms of server CPU (real puzzle: API CPU per right submit, a burst flat out)',
    real === undefined
      ? burst?.m
        ? `${burst.m.requests - (burst.m.statuses['200'] ?? 0)} of ${burst.m.requests} refused (expired before use?), not judged`
        : undefined
      : `${Math.round(real)} µs${slowText}`,
    real !== undefined && real <= 1000,
  );
  const wrong = at('challenge submit, wrong answer')?.cpu.server ?? undefined;
  judge(
    'a wrong answer ≤ 0.2 ms of server CPU',
    wrong === undefined ? undefined : `${Math.round(wrong)} µs`,
    wrong !== undefined && wrong <= 200,
  );
  const r5 = ratio(at('validate, used token'), at('validate, fresh token'));
  judge(
    'a replayed token validated at ≥ 1.0× a fresh one',
    r5?.toFixed(2).concat('×'),
    r5 !== undefined && r5 >= 1,
  );
  const idle = at('validate, bystander idle');
  const flood = at('validate during a wrong-answer flood');
  // Both p99s are paced measurements to the microsecond (BYSTANDER): their ratio as it is, no 1 ms floor.
  const r6 = idle && flood ? flood.p99 / Math.max(idle.p99, 0.001) : undefined;
  judge(
    'bystander validate p99 during a wrong-answer flood ≤ 2× its idle p99',
    idle && flood
      ? `p50 ${idle.p50} → ${flood.p50} ms, p99 ${idle.p99} → ${flood.p99} ms, ${r6!.toFixed(2)}×`
      : undefined,
    r6 !== undefined && r6 <= 2,
  );
  const r7 = ratio(at('validate, fresh token'), m(`bare Koa + postgres.js UPDATE (${label})`));
  judge(
    'validate, fresh token ≥ 1.0× bare Koa + one postgres.js UPDATE',
    r7?.toFixed(2).concat('×'),
    r7 !== undefined && r7 >= 1,
  );
  const peaks = results
    .filter((r) => r.server === 'gatehouse' && r.group === label && r.m?.rss.peakMiB != null)
    .map((r) => r.m!.rss.peakMiB!);
  const peak = peaks.length ? Math.max(...peaks) : undefined;
  // The image renderers are processes of their own (docs/decisions.md): never in the verdict, always beside it.
  const rendererPeaks = results
    .filter((r) => r.server === 'gatehouse' && r.group === label && r.m?.rss.childrenPeakMiB != null)
    .map((r) => r.m!.rss.childrenPeakMiB!);
  const renderers = rendererPeaks.length
    ? `; its image renderer processes beside it: ${Math.round(Math.max(...rendererPeaks))} MiB at their peak`
    : '';
  judge(
    'peak RSS of one API process under the bench load ≤ 150 MiB',
    peak === undefined
      ? undefined
      : `${Math.round(peak)} MiB${renderers}${options.cases.length ? ' (over the cases --cases ran only)' : ''}`,
    peak !== undefined && peak <= 150,
  );
  return [`The API's goals on ${label}, judged by this run:`, ...lines].join('\n');
}

/** The aim: our validate on PostgreSQL against bare Koa, and against Koa making the same one UPDATE. */
function verdictText(koaResult: Measurement | undefined): string {
  const target = results.find((r) => r.name === 'validate, fresh token (PostgreSQL)')?.m;
  if (!target || !koaResult) {
    return 'Aim: validate on PostgreSQL at no less than half of bare Koa: not measured (PostgreSQL absent).';
  }
  const ratio = target.reqPerSec / koaResult.reqPerSec;
  const top = ceiling(target, availableParallelism());
  const koaTop = ceiling(koaResult, availableParallelism());
  let verdict =
    `Aim: validate on PostgreSQL at no less than ${TARGET_RATIO} × bare Koa's throughput. Measured ` +
    `${ratio.toFixed(2)} ×: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}` +
    (top && koaTop ? ` (CPU ceilings: ${(top / koaTop).toFixed(2)} ×).` : '.');
  const floor = results.find((r) => r.name === 'bare Koa + postgres.js UPDATE (PostgreSQL)')?.m;
  if (floor) {
    verdict +=
      ` Against bare Koa making the same one UPDATE with postgres.js: ` +
      `${(target.reqPerSec / floor.reqPerSec).toFixed(2)} × its throughput, ` +
      `${Math.round(target.cpu.server ?? 0)} vs ${Math.round(floor.cpu.server ?? 0)} µs of server CPU per request.`;
  }
  return verdict;
}

await main();

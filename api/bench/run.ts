import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { Child } from './child.ts';
import type { Parties } from './cpu.ts';
import { type LoadSpec, measure, warmUp } from './load.ts';
import type { CreatedApp, ProfileSummary } from './protocol.ts';
import { type CaseResult, ceiling, describeRun, printTable, rows, writeDocs } from './report.ts';

/**
 * `npm run bench`: throughput and latency of the API's hot endpoints against a bare Koa app, in one run,
 * servers in child processes, autocannon in this one. Options (flag or environment variable):
 *   --duration <s>     BENCH_DURATION     seconds measured per case (5)
 *   --connections <n>  BENCH_CONNECTIONS  concurrent connections (20)
 *   --warmup <s>       BENCH_WARMUP       unmeasured seconds before each case (1)
 *   --profile          BENCH_PROFILE=1    sample the API process's CPU per case and summarise it
 *   --no-write         BENCH_WRITE=0      do not rewrite docs/benchmarks.md
 *   --only <text>      BENCH_ONLY         run only the database groups whose label contains <text>
 *                                         (pglite, postgresql, redis); the Koa baseline always runs
 *   BENCH_POSTGRES_URL (else TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REDIS_URL (else TEST_REDIS_URL, else redis://127.0.0.1:6379)
 *   BENCH_LOG_LEVEL    the API's LOG_LEVEL (info, as deployed; its output goes to /dev/null)
 */
const REPO = resolve(import.meta.dirname, '../..');
const DOCS = join(REPO, 'docs/benchmarks.md');
const TARGET_RATIO = 0.5;

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    warmup: { type: 'string' },
    profile: { type: 'boolean' },
    'no-write': { type: 'boolean' },
    only: { type: 'string' },
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
  postgresUrl:
    env.BENCH_POSTGRES_URL ?? env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: env.BENCH_REDIS_URL ?? env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
};
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

async function run(
  name: string,
  child: Child,
  spec: LoadSpec,
  parties: Parties,
  note?: () => string | undefined,
) {
  process.stdout.write(`   ${name} ... `);
  const m = await measure(child, spec, { ...load, profile: options.profile, parties });
  const extra = note?.();
  results.push({ name, m, ...(extra ? { note: extra } : {}) });
  if (m.profile) profiles.push({ name, summary: m.profile });
  const busy = m.cpu.machineBusy === null ? '' : `, machine ${Math.round(m.cpu.machineBusy * 100)}% busy`;
  console.log(`${Math.round(m.reqPerSec)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${busy}`);
  return m;
}

/** Endless round-robin over `tokens`, as validate bodies. */
function cycle(tokens: string[]): () => string {
  let i = 0;
  return () => JSON.stringify({ pass_token: tokens[i++ % tokens.length] });
}

/** The API on one database: validate with used tokens, with fresh tokens, then issue. */
/** A baseline from koa-child.ts, sent the same requests as validate (body of a token's size). */
async function baselineCase(name: string, childEnv: Record<string, string>, parties: Parties): Promise<void> {
  const koa = await Child.start('./koa-child.ts', childEnv);
  const body = JSON.stringify({ pass_token: `pt_${randomBytes(96).toString('base64url')}` });
  try {
    const spec = {
      path: '/v1/validate',
      headers: { 'X-App-Key': 'ak_bench', 'X-App-Secret': 'sk_bench' },
      body: () => body,
    };
    await warmUp(koa, spec, warm);
    await run(name, koa, spec, parties);
  } finally {
    await koa.stop();
  }
}

/** Whether --only selects this group of cases. */
function selected(label: string): boolean {
  return label.toLowerCase().includes(options.only);
}

async function apiCases(label: string, apiEnv: Record<string, string>, parties: Parties): Promise<void> {
  if (!selected(label)) return;
  section(`API on ${label}`);
  const api = await Child.start('./api-child.ts', apiEnv);
  try {
    const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
    const headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };

    const used = await api.call<string[]>({ type: 'mint', appId: app.appId, count: 500, consume: true });
    const usedSpec = { path: '/v1/validate', headers, body: cycle(used) };
    await warmUp(api, usedSpec, warm);
    const usedRun = await run(`validate, used token (${label})`, api, usedSpec, parties);

    // Fresh tokens: enough for the case at twice the used-token rate; a run that runs out is redone once.
    let count = Math.ceil(Math.max(usedRun.reqPerSec, 500) * options.durationSeconds * 2) + 1000;
    for (let attempt = 1; ; attempt++) {
      process.stdout.write(`   minting ${count} pass tokens ... `);
      const started = performance.now();
      const fresh = await api.call<string[]>({ type: 'mint', appId: app.appId, count, consume: false });
      console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
      let next = 0;
      const spec = {
        path: '/v1/validate',
        headers,
        body: () => JSON.stringify({ pass_token: fresh[Math.min(next++, fresh.length - 1)] }),
      };
      const m = await run(`validate, fresh token (${label})`, api, spec, parties, () =>
        next > fresh.length ? `tokens ran out after ${fresh.length}` : undefined,
      );
      if (next <= fresh.length || attempt === 2) break;
      results.pop(); // the rerun replaces it
      if (options.profile) profiles.pop();
      count = Math.ceil(m.reqPerSec * options.durationSeconds * 3) + 1000;
    }

    await issueCase(label, api, headers, parties);
    await challengeCases(label, api, parties);
  } finally {
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
    `issue, enterprise plan (${label})`,
    api,
    { path: '/v1/server/challenge/issue', headers, body },
    parties,
  );
}

/**
 * The end-user half: initialization (invisible tier: quota count, risk score, puzzle, seal; and the slide
 * tier, which draws an image too) and submission of solved challenges (open, attempt row, proof-of-work
 * check, mark solved, mint). Submissions need fresh solved challenges, prepared in the API process first.
 */
async function challengeCases(label: string, api: Child, parties: Parties) {
  const signals = { webdriver: false, languages: ['en'], screen: { w: 1440, h: 900 } };
  for (const tier of ['invisible-test-mode', 'slide'] as const) {
    const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise', challenge: tier });
    const body = JSON.stringify({ app_key: app.appKey, action: 'login', signals });
    const spec = { path: '/v1/challenge/init', headers: {}, body: () => body };
    await warmUp(api, spec, warm);
    const m = await run(
      `challenge init, ${tier === 'slide' ? 'slide tier' : 'invisible tier'} (${label})`,
      api,
      spec,
      parties,
    );
    if (tier !== 'invisible-test-mode') continue;
    const count = Math.ceil(Math.max(m.reqPerSec, 200) * options.durationSeconds * 1.5) + 500;
    process.stdout.write(`   solving ${count} challenges ... `);
    const started = performance.now();
    const solved = await api.call<string[]>({ type: 'solved-challenges', appKey: app.appKey, count });
    console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
    let next = 0;
    await run(
      `challenge submit, invisible tier (${label})`,
      api,
      { path: '/v1/challenge/submit', headers: {}, body: () => solved[Math.min(next++, solved.length - 1)]! },
      parties,
      () => (next > solved.length ? `challenges ran out after ${solved.length}` : undefined),
    );
  }
}

/** Only the issue case, with the limiter's buckets in Redis. */
async function redisIssueCase(
  label: string,
  apiEnv: Record<string, string>,
  parties: Parties,
): Promise<void> {
  section(`API on ${label}`);
  const api = await Child.start('./api-child.ts', apiEnv);
  try {
    const app = await api.call<CreatedApp>({ type: 'create-app', plan: 'enterprise' });
    await issueCase(label, api, { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret }, parties);
  } finally {
    await api.stop();
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

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    return line?.split(':')[1]?.trim() ?? 'unknown CPU';
  } catch {
    return 'unknown CPU';
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
  console.log(
    `Gatehouse bench: ${options.durationSeconds} s per case, ${options.connections} connections, ` +
      `${options.warmupSeconds} s warm-up${options.profile ? ', profiling' : ''}`,
  );

  section('bare Koa (baseline)');
  await baselineCase('bare Koa, JSON answer', {}, {});

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
      if (selected('PostgreSQL')) {
        section('bare Koa + one postgres.js UPDATE (the floor for a validation)');
        await baselineCase(
          'bare Koa + postgres.js UPDATE (PostgreSQL)',
          { DATABASE_URL: url.toString() },
          { postgresDatabase: name },
        );
      }
      await apiCases('PostgreSQL', { ...base, DATABASE_URL: url.toString() }, { postgresDatabase: name });
      if (await redisReachable(options.redisUrl)) {
        await redisIssueCase(
          'PostgreSQL + Redis limiter',
          { ...base, DATABASE_URL: url.toString(), REDIS_URL: options.redisUrl },
          { postgresDatabase: name, redis: true },
        );
      } else {
        console.warn(`\n!!! Redis not reachable at ${options.redisUrl}: the Redis limiter case is skipped`);
        results.push({
          name: 'issue, enterprise plan (PostgreSQL + Redis limiter)',
          skipped: 'Redis not reachable',
        });
      }
    } finally {
      await dropDatabase();
    }
  } else if (wantPostgres) {
    console.warn(`\n!!! PostgreSQL not reachable at ${options.postgresUrl}: its cases are skipped`);
    for (const name of ['validate, used token', 'validate, fresh token', 'issue, enterprise plan']) {
      results.push({ name: `${name} (PostgreSQL)`, skipped: 'PostgreSQL not reachable' });
    }
  }
  rmSync(scratch, { recursive: true, force: true });

  const baseline = results[0]?.m?.reqPerSec;
  const table = rows(results, availableParallelism());
  printTable(table);
  const target = results.find((r) => r.name === 'validate, fresh token (PostgreSQL)')?.m;
  const koaResult = results[0]?.m;
  let verdict =
    'Aim: validate on PostgreSQL at no less than half of bare Koa: not measured (PostgreSQL absent).';
  if (target && koaResult && baseline) {
    const ratio = target.reqPerSec / baseline;
    const top = ceiling(target, availableParallelism());
    const koaTop = ceiling(koaResult, availableParallelism());
    verdict =
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
  }
  console.log(`\n${verdict}`);
  const profileSummary = profileText();
  if (profileSummary) console.log(`\n${profileSummary}`);

  if (options.write) {
    const args = process.argv.slice(2);
    const command =
      env.npm_lifecycle_event === 'bench'
        ? `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`
        : `node api/bench/run.ts ${args.join(' ')}`.trim();
    const block = describeRun(
      {
        command,
        date,
        machine:
          `nproc ${availableParallelism()}, ${cpuModel()}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
          `Linux ${release()}, load average ${loadBefore} before the run and ${loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')} after (other work on the machine competes)`,
        node: `Node ${process.version}`,
        postgres: pgInfo ? `${pgInfo}, on the same machine` : 'not reachable',
        settings:
          `${options.durationSeconds} s per case after ${options.warmupSeconds} s warm-up, ${options.connections} connections, ` +
          `autocannon 9 in the bench process, each server in its own child process, API LOG_LEVEL=${options.logLevel} ` +
          `(to /dev/null), DB_POOL_MAX 10, PGlite on disk in a temporary folder${options.profile ? ', profiler on for the profiled runs' : ''}`,
      },
      table,
      verdict,
      profileSummary,
    );
    writeDocs(DOCS, block);
    console.log(`\nwrote ${DOCS}`);
  }
}

await main();

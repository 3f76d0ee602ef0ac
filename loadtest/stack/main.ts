import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Child, ROOT, waitUntilReady } from '@gatehouse/api/testing/processes';
import postgres from 'postgres';
import { OperatorProbes } from './operator-probes.ts';
import { startProxy } from './proxy.ts';

/**
 * `npm run stack [-- --regions 2 --instances 2]`: a local multi-region Gatehouse on 127.0.0.1.
 * Per region: M API instances behind a round-robin proxy, a bypass and a fallback standby probing that
 * proxy, and the operator's probes of it, which tell the region's standbys to serve while it is down. Shared: a fresh PostgreSQL database, Redis for limits (REDIS_URL) and offline tokens
 * (STANDBY_STORE_URL). Endpoints go to stdout and to a JSON file (for k6). Commands on stdin and on the
 * control port: kill <region>, restart <region>, status. Ctrl-C stops every child.
 */

const { values: args } = parseArgs({
  options: {
    regions: { type: 'string', default: '2' },
    instances: { type: 'string', default: '2' },
    'base-port': { type: 'string', default: process.env.STACK_BASE_PORT ?? '18000' },
    out: {
      type: 'string',
      default: process.env.STACK_ENDPOINTS_FILE ?? join(ROOT, 'loadtest/.stack/endpoints.json'),
    },
  },
});
const REGIONS = Number(args.regions);
const INSTANCES = Number(args.instances);
const BASE = Number(args['base-port']);
if (!(REGIONS >= 1 && REGIONS <= 9 && INSTANCES >= 1 && INSTANCES <= 9 && BASE > 1024 && BASE < 64000)) {
  throw new Error('stack: --regions and --instances must be 1 to 9, --base-port 1025 to 63999.');
}
const HOST = '127.0.0.1';
const DATABASE_URL = process.env.STACK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/gatehouse_stack';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const STORE_URL = process.env.STANDBY_STORE_URL ?? REDIS_URL;
const ADMIN_TOKEN = process.env.GATEHOUSE_ADMIN_TOKEN ?? randomBytes(24).toString('base64url');
/** The standbys' credential for the snapshot (and the operator's mode switch): never the admin token. */
const SYNC_TOKEN = process.env.STANDBY_SYNC_TOKEN ?? `st_${randomBytes(24).toString('base64url')}`;
const TOKEN_KEY = process.env.GATEHOUSE_TOKEN_KEY ?? randomBytes(32).toString('base64');
// Per base port, beside the endpoints file: two stacks on different ports never share a folder.
const DATA_DIR = process.env.STACK_DATA_DIR ?? join(dirname(args.out), `data-${BASE}`);
const PROBES = {
  STANDBY_PROBE_INTERVAL_MS: process.env.STANDBY_PROBE_INTERVAL_MS ?? '200',
  STANDBY_PROBE_TIMEOUT_MS: process.env.STANDBY_PROBE_TIMEOUT_MS ?? '500',
  STANDBY_FAIL_AFTER: process.env.STANDBY_FAIL_AFTER ?? '3',
  STANDBY_RECOVER_AFTER: process.env.STANDBY_RECOVER_AFTER ?? '3',
  STANDBY_SNAPSHOT_INTERVAL_MS: process.env.STANDBY_SNAPSHOT_INTERVAL_MS ?? '2000',
};

interface Region {
  name: string;
  proxyPort: number;
  apiPorts: number[];
  bypassPort: number;
  fallbackPort: number;
  apis: Child[];
  standbys: Child[];
  proxy?: Server;
}
const url = (port: number) => `http://${HOST}:${port}`;
const regions: Region[] = Array.from({ length: REGIONS }, (_, r) => {
  const base = BASE + r * 100;
  return {
    name: `r${r + 1}`,
    proxyPort: base,
    apiPorts: Array.from({ length: INSTANCES }, (_, i) => base + 1 + i),
    bypassPort: base + 50,
    fallbackPort: base + 51,
    apis: [],
    standbys: [],
  };
});
const CONTROL_PORT = BASE + 99;

/** 1. A fresh database: dropped and created again on the same server. */
async function freshDatabase(): Promise<void> {
  const target = new URL(DATABASE_URL);
  const name = target.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`stack: unusable database name "${name}".`);
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop database if exists ${name} with (force)`);
    await sql.unsafe(`create database ${name}`);
  } finally {
    await sql.end();
  }
}

function apiEnv(region: Region, port: number): Record<string, string> {
  return {
    HOST,
    PORT: String(port),
    DATABASE_URL,
    REDIS_URL,
    STANDBY_STORE_URL: STORE_URL,
    DATA_DIR: join(DATA_DIR, `${region.name}-api-${port}`),
    GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
    STANDBY_SYNC_TOKEN: SYNC_TOKEN,
    GATEHOUSE_TOKEN_KEY: TOKEN_KEY,
    STANDBY_BYPASS_URLS: url(region.bypassPort),
    STANDBY_FALLBACK_URLS: url(region.fallbackPort),
    GATEHOUSE_REGION: region.name,
  };
}

async function startApi(region: Region, index: number): Promise<void> {
  const port = region.apiPorts[index]!;
  const child = new Child(`${region.name} api ${index + 1}`, 'api/src/server.ts', apiEnv(region, port));
  region.apis[index] = child;
  await waitUntilReady(child, `${url(port)}/readyz`);
}

function startStandbys(region: Region): void {
  for (const role of ['bypass', 'fallback'] as const) {
    region.standbys.push(
      new Child(`${region.name} ${role}`, 'standby/src/server.ts', {
        ...PROBES,
        STANDBY_ROLE: role,
        STANDBY_HOST: HOST,
        STANDBY_BYPASS_PORT: role === 'bypass' ? String(region.bypassPort) : '0',
        STANDBY_FALLBACK_PORT: role === 'fallback' ? String(region.fallbackPort) : '0',
        MAIN_API_URL: url(region.proxyPort),
        STANDBY_DATA_DIR: join(DATA_DIR, `${region.name}-${role}`),
        STANDBY_STORE_URL: STORE_URL,
        STANDBY_SYNC_TOKEN: SYNC_TOKEN,
        GATEHOUSE_REGION: region.name,
      }),
    );
  }
}

/**
 * An app without per-IP limits (every k6 VU is 127.0.0.1). Both apps get the invisible tier whatever the
 * risk engine scores (scores are 0..100, so `invisible_below: 101` always holds): k6 cannot solve an image
 * challenge, and a score that wanders over the threshold on one run made the challenge scenario flaky.
 * The test-mode app solves a one-hash puzzle; the other a real one, at the default difficulty.
 */
async function createApp(name: string, testMode: boolean): Promise<{ appKey: string; appSecret: string }> {
  const res = await fetch(`${url(regions[0]!.proxyPort)}/admin/v1/apps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name,
      test_mode: testMode,
      risk_policy: {
        invisible_below: 101,
        image_below: 101,
        rate_limit: { ip_per_minute: 100_000_000, high_risk_ip_per_minute: 100_000_000 },
      },
    }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the admin API's answer, read field by field.
  const body = (await res.json()) as any;
  if (res.status !== 201)
    throw new Error(`stack: creating app ${name}: ${res.status} ${JSON.stringify(body)}`);
  return { appKey: body.data.app_key, appSecret: body.data.app_secret };
}

function endpoints(apps: Record<string, unknown>) {
  return {
    adminToken: ADMIN_TOKEN,
    control: url(CONTROL_PORT),
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    apps,
    regions: regions.map((r) => ({
      name: r.name,
      api: url(r.proxyPort),
      instances: r.apiPorts.map(url),
      bypass: url(r.bypassPort),
      fallback: url(r.fallbackPort),
    })),
  };
}

async function standbyStatus(port: number): Promise<unknown> {
  try {
    const res = await fetch(`${url(port)}/status`, { signal: AbortSignal.timeout(1000) });
    // biome-ignore lint/suspicious/noExplicitAny: status document.
    const s = (await res.json()) as any;
    return { serving: s.serving, apps: s.snapshot?.apps };
  } catch (error) {
    return { error: String(error) };
  }
}

async function status() {
  const verdicts = operator?.status() ?? {};
  return Promise.all(
    regions.map(async (r) => ({
      region: r.name,
      api: r.apis.map((a, i) => ({ port: r.apiPorts[i], pid: a.proc.pid, running: a.running })),
      operator: verdicts[r.name],
      bypass: await standbyStatus(r.bypassPort),
      fallback: await standbyStatus(r.fallbackPort),
    })),
  );
}

function regionNamed(name: string | undefined): Region {
  const region = regions.find((r) => r.name === name || String(regions.indexOf(r) + 1) === name);
  if (!region) throw new Error(`no region "${name}" (regions: ${regions.map((r) => r.name).join(', ')})`);
  return region;
}

/** kill <region> | restart <region> | status: what stdin and the control port accept. */
async function command(line: string): Promise<unknown> {
  const [verb, which] = line.trim().split(/\s+/);
  if (verb === 'status') return status();
  if (verb === 'kill') {
    const region = regionNamed(which);
    const at = Date.now();
    await Promise.all(region.apis.map((a) => a.stop('SIGKILL')));
    return { killed: region.name, at };
  }
  if (verb === 'restart') {
    const region = regionNamed(which);
    const at = Date.now();
    await Promise.all(region.apis.map((a) => a.stop('SIGKILL')));
    await Promise.all(region.apiPorts.map((_, i) => startApi(region, i)));
    return { restarted: region.name, at, readyMs: Date.now() - at };
  }
  throw new Error(`unknown command "${line.trim()}" (kill <region>, restart <region>, status)`);
}

let stopping = false;
async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log('stack: stopping');
  operator?.stop();
  const all = regions.flatMap((r) => [...r.apis, ...r.standbys]);
  await Promise.all(all.map((c) => c.stop('SIGTERM')));
  for (const r of regions) r.proxy?.close();
  control?.close();
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

let control: Server | undefined;
let operator: OperatorProbes | undefined;
try {
  const started = Date.now();
  rmSync(DATA_DIR, { recursive: true, force: true });
  mkdirSync(DATA_DIR, { recursive: true });
  await freshDatabase();
  // 2. One instance first (it migrates the fresh database), then the others; proxies in front.
  await startApi(regions[0]!, 0);
  await Promise.all(
    regions.flatMap((r, ri) => r.apiPorts.map((_, i) => (ri === 0 && i === 0 ? null : startApi(r, i)))),
  );
  for (const r of regions) {
    r.proxy = await startProxy(HOST, r.proxyPort, () => r.apiPorts.filter((_, i) => r.apis[i]?.running));
  }
  const apps = {
    test: await createApp('loadtest-test-mode', true),
    real: await createApp('loadtest-real', false),
  };
  // 3. The standbys: ready when they see their region up and hold a snapshot with the apps.
  for (const r of regions) startStandbys(r);
  await Promise.all(
    regions.flatMap((r) =>
      r.standbys.map((s, i) => {
        const port = i === 0 ? r.bypassPort : r.fallbackPort;
        return waitUntilReady(
          s,
          `${url(port)}/status`,
          90_000,
          (b) => b.serving === false && b.snapshot?.apps >= 2,
        );
      }),
    ),
  );
  // 4. The operator's side of the health probing, at the standbys' own pace.
  operator = new OperatorProbes({
    regions: regions.map((r) => ({
      name: r.name,
      api: url(r.proxyPort),
      standbys: [url(r.bypassPort), url(r.fallbackPort)],
    })),
    token: SYNC_TOKEN,
    settings: {
      intervalMs: Number(PROBES.STANDBY_PROBE_INTERVAL_MS),
      timeoutMs: Number(PROBES.STANDBY_PROBE_TIMEOUT_MS),
      failAfter: Number(PROBES.STANDBY_FAIL_AFTER),
      recoverAfter: Number(PROBES.STANDBY_RECOVER_AFTER),
    },
    reassertMs: 5000,
    log: (line) => console.log(line),
  });
  // 5. The control port (for k6, which cannot write to our stdin): POST /kill/r1, /restart/r1, GET /status.
  control = createServer(async function controlPort(req, res) {
    const [, verb, which] = (req.url ?? '').split('/');
    try {
      const answer = await command(`${verb} ${which ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    } catch (error) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: String(error) }));
    }
  });
  control.listen(CONTROL_PORT, HOST);
  const doc = endpoints(apps);
  mkdirSync(join(args.out, '..'), { recursive: true });
  writeFileSync(args.out, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`stack: ${REGIONS} regions × ${INSTANCES} API instances ready in ${Date.now() - started} ms`);
  console.log(`  database ${DATABASE_URL}, redis ${REDIS_URL}, standby store ${STORE_URL}`);
  for (const r of doc.regions) {
    console.log(`  ${r.name}: api ${r.api} (instances ${r.instances.join(' ')})`);
    console.log(`      bypass ${r.bypass}  fallback ${r.fallback}`);
  }
  console.log(`  control ${doc.control} (POST /kill/<region>, /restart/<region>, GET /status)`);
  console.log(`  endpoints written to ${args.out}`);
  console.log('stack: ready. Commands: kill <region>, restart <region>, status; Ctrl-C stops.');
  const rl = createInterface({ input: process.stdin });
  rl.on('line', async (line) => {
    if (!line.trim()) return;
    try {
      console.log(JSON.stringify(await command(line)));
    } catch (error) {
      console.log(`error: ${(error as Error).message}`);
    }
  });
  rl.on('close', () => {
    // stdin closed (detached runs): keep serving until a signal.
  });
} catch (error) {
  console.error(`stack: failed to start: ${(error as Error).message}`);
  await stopAll(1);
}

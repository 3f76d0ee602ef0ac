import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildServer, DIST } from '../scripts/build-server.ts';
import {
  DESKTOP_CHROME,
  DESKTOP_SIGNALS,
  databaseAvailable,
  freshPostgresDatabase,
  postJson,
  TEST_DATABASE,
} from './harness.ts';
import { type ApiProcess, ROOT, spawnApi, stop } from './start-process.ts';

/*
 * Image challenges are drawn in renderer processes the API forks (api/src/challenges/image-pool.ts; issue
 * 14: the canvas, Skia and their memory out of the API process). Checked on the bundle as the container
 * runs it (the Dockerfile's api target), over real HTTP: the API process never maps the canvas library; a renderer
 * killed with kill -9 leaves the API answering, image inits are shed with 503 and Retry-After until the
 * renderer is restarted, then served again; and a renderer never outlives its API (no orphan).
 */
const run = TEST_DATABASE === 'pglite' || (await databaseAvailable());
const ADMIN_TOKEN = 'renderer-test-admin-token-0123456789';

/** The pids of a process's children (every thread's list). */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number),
  );
}

const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
const renderersOf = (pid: number) => childrenOf(pid).filter((c) => cmdline(c).includes('image-worker.js'));
/** Mapped the canvas's native library (Skia). */
const mapsCanvas = (pid: number) => /@napi-rs\/canvas/.test(readFileSync(`/proc/${pid}/maps`, 'utf8'));
/** Exited: gone from /proc, or a zombie waiting for its parent. */
const gone = (pid: number) =>
  !existsSync(`/proc/${pid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

describe.runIf(run)('renderer processes of the bundled API', () => {
  let outdir: string;
  let dataDir: string;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let api: ApiProcess;
  let appKey: string;
  const seen = new Set<number>();

  beforeAll(async () => {
    mkdirSync(DIST, { recursive: true });
    outdir = mkdtempSync(join(DIST, 'test-renderer-'));
    const server = await buildServer(outdir);
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-renderer-'));
    if (TEST_DATABASE === 'postgres') database = await freshPostgresDatabase();
    api = await spawnApi(
      {
        DATA_DIR: dataDir,
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN,
        TRUSTED_PROXIES: 'loopback',
        // Two ready per kind, four requests allowed to wait: a burst of 20 meets an empty pool.
        IMAGE_POOL_SIZE: '2',
        IMAGE_POOL_WAITING: '4',
        ...(database ? { DATABASE_URL: database.url } : {}),
      },
      [
        '--no-experimental-strip-types',
        '--max-semi-space-size=8',
        '--max-old-space-size=256',
        relative(ROOT, server),
      ],
    );
    const res = await postJson(
      `${api.url}/admin/v1/apps`,
      { name: 'renderer', risk_policy: { invisible_below: 0, image_below: 101, image_kinds: ['slide'] } },
      { Authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    appKey = res.body.data.app_key;
  }, 120_000);

  afterAll(async () => {
    await stop(api);
    // Only if a check below failed: no renderer of this test is left running.
    for (const pid of seen) if (!gone(pid)) process.kill(pid, 'SIGKILL');
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  let address = 0;
  const init = () =>
    postJson(
      `${api.url}/v1/challenge/init`,
      { app_key: appKey, action: 'login', signals: DESKTOP_SIGNALS },
      { ...DESKTOP_CHROME, 'X-Forwarded-For': `10.88.${(address >> 8) & 255}.${address++ & 255}` },
    );
  const served = async () => {
    const res = await init();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.tier).toBe('image');
    expect(JSON.stringify(res.body.data.image.view)).toMatch(/data:image\/jpeg;base64,/);
  };
  const renderer = () => {
    const pids = renderersOf(api.child.pid!);
    expect(pids).toHaveLength(1);
    seen.add(pids[0]!);
    return pids[0]!;
  };

  it('draws in a renderer process; the API process never maps the canvas library, nor gives its configuration to the renderer', async () => {
    await vi.waitFor(served, { timeout: 60_000, interval: 250 });
    const pid = renderer();
    expect(mapsCanvas(pid)).toBe(true);
    expect(mapsCanvas(api.child.pid!)).toBe(false);
    // The API's configuration stays in the API: the renderer's environment holds no secret or URL.
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
    expect(readFileSync(`/proc/${api.child.pid}/environ`, 'utf8')).toContain(ADMIN_TOKEN);
    expect(environ).not.toContain(ADMIN_TOKEN);
    expect(environ).not.toMatch(/DATABASE_URL|DATA_DIR|TRUSTED_PROXIES/);
    expect(environ).toContain('MALLOC_ARENA_MAX=1');
  }, 90_000);

  it('a renderer killed with kill -9: the API keeps answering, sheds image inits with 503 and Retry-After, restarts it and serves again', async () => {
    const old = renderer();
    process.kill(old, 'SIGKILL');
    await vi.waitFor(() => expect(gone(old)).toBe(true), { timeout: 10_000 });
    const answers = await Promise.all(Array.from({ length: 20 }, init));
    expect(answers.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    const shed = answers.filter((r) => r.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    for (const r of shed) {
      expect(r.body).toMatchObject({ code: -1, error: 'service_unavailable' });
      expect(r.headers?.get('retry-after')).toBe('1');
    }
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    // The operator sees the crash in the log, with the pid and the restart's delay, not only as 503s.
    await vi.waitFor(
      () =>
        expect(api.output()).toMatch(
          new RegExp(`"pid":${old}.*image renderer exited \\(SIGKILL\\); restarting in \\d+ ms`),
        ),
      {
        timeout: 5_000,
      },
    );
    await vi.waitFor(served, { timeout: 30_000, interval: 250 });
    expect(renderer()).not.toBe(old);
    expect(api.child.exitCode).toBeNull();
    expect(mapsCanvas(api.child.pid!)).toBe(false);
  }, 60_000);

  it('a renderer does not outlive its API, even one killed with kill -9', async () => {
    const pid = renderer();
    api.child.kill('SIGKILL');
    await vi.waitFor(() => expect(gone(pid)).toBe(true), { timeout: 10_000, interval: 100 });
  }, 30_000);
});

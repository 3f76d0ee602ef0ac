import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseAvailable, TEST_DATABASE } from './harness.ts';
import { firstUrl, freePort, ROOT, type Started, startStartTs } from './start-process.ts';

/* `npm start`'s settings as a person gives them: a .env file beside it, and a port already taken. */
const run = (await databaseAvailable()) && TEST_DATABASE === 'pglite';
const folders: string[] = [];
const children: Started[] = [];

afterAll(async () => {
  for (const started of children) {
    if (started.child.exitCode !== null || started.child.signalCode !== null) continue;
    const exited = once(started.child, 'exit');
    started.child.kill('SIGTERM');
    await exited;
  }
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-start-'));
  folders.push(dir);
  return dir;
}

describe.runIf(run)('npm start settings', { timeout: 240_000 }, () => {
  it('reads .env (.env.example copied, one port changed); a variable set in the shell wins', async () => {
    const work = folder();
    const demoPort = await freePort();
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    writeFileSync(join(work, '.env'), `${example}\nDEMO_PORT=${demoPort}\n`);
    const apiPort = await freePort();
    const started = await startStartTs(
      {
        PORT: String(apiPort),
        STANDBY_BYPASS_PORT: String(await freePort()),
        STANDBY_FALLBACK_PORT: String(await freePort()),
      },
      work,
    );
    children.push(started);
    // DEMO_PORT comes from the file; PORT from the shell, over the file's 8080.
    expect(firstUrl(started.banner.get('Demo login'))).toBe(`http://127.0.0.1:${demoPort}/login`);
    expect(firstUrl(started.banner.get('API'))).toBe(`http://127.0.0.1:${apiPort}`);
    expect(started.banner.get('Settings')).toContain(join(work, '.env'));
    expect((await fetch(`http://127.0.0.1:${demoPort}/login`)).status).toBe(200);
    // The standby roles share this process's store: no warning that outage tokens would be lost.
    expect(started.output()).not.toContain('STANDBY_STORE_URL is not set');
  });

  it('is quiet when idle: the standby roles keep in sync without an info line', async () => {
    const started = await startStartTs(
      {
        DATA_DIR: join(folder(), 'data'),
        PORT: '0',
        DEMO_PORT: '0',
        LOG_LEVEL: 'info',
        STANDBY_SNAPSHOT_INTERVAL_MS: '1000',
      },
      folder(),
    );
    children.push(started);
    const banner = started.output().length;
    const status = `${firstUrl(started.banner.get('Standby bypass'))}/status`;
    const refreshedAt = async () =>
      ((await (await fetch(status)).json()) as { snapshot: { refreshed_at: string } }).snapshot.refreshed_at;
    // Two more syncs (snapshot and widget copy) after the banner, each a request to the API.
    const seen = new Set([await refreshedAt()]);
    while (seen.size < 3) {
      await new Promise((r) => setTimeout(r, 200));
      seen.add(await refreshedAt());
    }
    // The standby URLs the banner prints answer at their root: which role, and where its state is.
    for (const role of ['bypass', 'fallback']) {
      const root = firstUrl(started.banner.get(`Standby ${role}`));
      const res = await fetch(`${root}/`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ code: 0, data: { role, links: { status: '/status' } } });
    }
    const after = started
      .output()
      .slice(banner)
      .split('\n')
      .filter((l) => l.startsWith('{'));
    // This test's own reads of / and /status aside, nothing at info.
    const entries = after.map((l) => JSON.parse(l) as { level: number; path?: string });
    expect(entries.filter((e) => e.level >= 30 && e.path !== '/status' && e.path !== '/')).toEqual([]);
    expect(entries.filter((e) => e.path === '/status').length).toBeGreaterThan(0);
  });

  it('a busy port stops it with the variable that moves it', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const busy = (holder.address() as { port: number }).port;
    try {
      const failed = startStartTs(
        { DATA_DIR: join(folder(), 'data'), PORT: String(await freePort()), DEMO_PORT: String(busy) },
        folder(),
      );
      const error = await failed.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).toContain('exited with 1');
      expect(error?.message).toContain(`port ${busy} on 127.0.0.1 is already in use`);
      expect(error?.message).toContain('set DEMO_PORT to another port');
    } finally {
      holder.close();
    }
  });
});

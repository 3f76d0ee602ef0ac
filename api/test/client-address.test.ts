import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTH_THROTTLE_DEFAULTS,
  databaseAvailable,
  IN_CI,
  postFrom,
  startTestApi,
  type TestApi,
} from './harness.ts';

/*
 * The client address behind real proxies. With Koa's `proxy: true` (what TRUST_PROXY=true set, on every
 * Deployment the operator rendered) the leftmost X-Forwarded-For entry was the client: whatever the client
 * wrote. An outside probe got 150 of 150 challenge inits past a per-address limit of 20 by writing a new
 * address into each request, met no 429 after 60 wrong admin tokens, locked a victim's correct app secret
 * out by writing the victim's address, and had strings that are not addresses taken as its address.
 *
 * Here the proxies are nginx, configured as an Ingress controller is (`$proxy_add_x_forwarded_for`), one
 * or two of them in a row, and each client connects from its own loopback address (127.0.0.x), so the
 * address the API must find is known. Every request carries a spoofed header of another style; none may
 * change who the client is.
 */

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
if (!NGINX) {
  const message =
    "nginx is not installed (Debian's nginx-light; bash .ci/run installs it): the proxy-hop tests cannot run.";
  if (IN_CI) throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
}
const run = !!NGINX && (await databaseAvailable());

/** Every way a client tries to name its own address; each request of a test sends the next one. */
const SPOOFS: Record<string, string | string[]>[] = [
  { 'X-Forwarded-For': '203.0.113.1' },
  { 'X-Forwarded-For': '203.0.113.2, 198.51.100.2' },
  { 'X-Forwarded-For': ['203.0.113.3', '198.51.100.3'] },
  { 'x-forwarded-for': '2001:db8::3' },
  { 'X-Forwarded-For': '[2001:db8::4]:4711' },
  { 'X-Forwarded-For': '203.0.113.5:80' },
  { 'X-Forwarded-For': 'unknown' },
  { 'X-Forwarded-For': 'not-an-address' },
  { 'X-Forwarded-For': '<script>alert(1)</script>' },
  { Forwarded: 'for=203.0.113.9;proto=https' },
  { 'X-Real-IP': '203.0.113.10', 'True-Client-IP': '203.0.113.10', 'CF-Connecting-IP': '203.0.113.10' },
  { 'X-Forwarded-For': ',,,' },
];

/** A port below 32768 nobody listens on (ports from 0 fall in the outgoing range). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

interface Proxies {
  /** client → ingress → API */
  oneHop: string;
  /** client → CDN → ingress → API */
  twoHops: string;
  stop(): Promise<void>;
}

/** nginx in front of `apiUrl` as an Ingress controller, and a second nginx in front of that as a CDN. */
async function startNginx(apiUrl: string): Promise<Proxies> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-nginx-'));
  const [ingress, cdn] = [await freePort(), await freePort()];
  const hop = (listen: number, upstream: string) => `
    server {
      listen 127.0.0.1:${listen};
      location / {
        proxy_pass ${upstream};
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      }
    }`;
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((name) => `${name}_temp_path ${join(dir, name)};`)
    .join('\n    ');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
    access_log off;
    ${temp}
    ${hop(ingress, apiUrl)}
    ${hop(cdn, `http://127.0.0.1:${ingress}`)}
}
`,
  );
  const test = spawnSync(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-t'], { encoding: 'utf8' });
  if (test.status !== 0) throw new Error(`nginx refused its configuration: ${test.stderr}`);
  const child: ChildProcess = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const oneHop = `http://127.0.0.1:${ingress}`;
  const twoHops = `http://127.0.0.1:${cdn}`;
  // Ready once both listeners answer (the API behind them answers 404 at this path).
  for (let i = 0; ; i++) {
    const up = await Promise.all(
      [oneHop, twoHops].map((url) =>
        fetch(`${url}/healthz`).then(
          (res) => res.ok,
          () => false,
        ),
      ),
    );
    if (up.every(Boolean)) break;
    if (i > 100 || child.exitCode !== null) throw new Error('nginx did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    oneHop,
    twoHops,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Five inits a minute per address: the limit a spoofed header must not multiply. */
const STRICT_POLICY = { rate_limit: { ip_per_minute: 5, high_risk_ip_per_minute: 5 } };

describe.runIf(run)('client address behind real proxies', () => {
  /** TRUSTED_PROXIES names the proxies' address (ranges). */
  let byRange: TestApi;
  /** TRUSTED_PROXIES=2: a CDN and an Ingress controller, counted. */
  let byHops: TestApi;
  let rangeProxies: Proxies;
  let hopProxies: Proxies;

  beforeAll(async () => {
    [byRange, byHops] = await Promise.all([
      startTestApi({ TRUSTED_PROXIES: '127.0.0.1', ...AUTH_THROTTLE_DEFAULTS }),
      startTestApi({ TRUSTED_PROXIES: '2', ...AUTH_THROTTLE_DEFAULTS }),
    ]);
    [rangeProxies, hopProxies] = await Promise.all([startNginx(byRange.url), startNginx(byHops.url)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([rangeProxies?.stop(), hopProxies?.stop()]);
    await Promise.all([byRange?.close(), byHops?.close()]);
  });

  const routes = () => [
    { name: 'one proxy, trusted by range', api: byRange, url: rangeProxies.oneHop, client: '127.0.0.11' },
    { name: 'two proxies, trusted by range', api: byRange, url: rangeProxies.twoHops, client: '127.0.0.12' },
    { name: 'two proxies, trusted by hop count', api: byHops, url: hopProxies.twoHops, client: '127.0.0.13' },
    { name: 'no proxy (a caller inside the network)', api: byRange, url: byRange.url, client: '127.0.0.14' },
  ];

  it('a per-address limit counts the client as itself, whatever header it sends', async () => {
    for (const route of routes()) {
      const app = await route.api.createApp({ name: 'limits', risk_policy: STRICT_POLICY });
      const statuses: number[] = [];
      for (const spoof of SPOOFS) {
        const res = await postFrom(
          route.client,
          `${route.url}/v1/challenge/init`,
          { app_key: app.appKey, action: 'login' },
          spoof,
        );
        statuses.push(res.status);
      }
      // Five allowed, every later one refused: the spoofed headers never made a new source.
      const limited = statuses.filter((status) => status === 429).length;
      expect(limited, `${route.name}: ${statuses.join(' ')}`).toBe(SPOOFS.length - 5);
      // Another client behind the same proxies is its own source, not refused.
      const neighbour = route.client.replace(/\d+$/, (n) => String(Number(n) + 100));
      const fresh = await postFrom(neighbour, `${route.url}/v1/challenge/init`, {
        app_key: app.appKey,
        action: 'login',
      });
      expect(fresh.status, route.name).not.toBe(429);
    }
  });

  it('wrong admin tokens meet 429 however the sender names itself', async () => {
    for (const route of routes()) {
      const statuses: number[] = [];
      for (const spoof of SPOOFS) {
        const res = await postFrom(
          route.client.replace(/\d+$/, (n) => String(Number(n) + 20)),
          `${route.url}/admin/v1/apps`,
          { name: 'x' },
          {
            ...spoof,
            authorization: 'Bearer wrong-token-wrong-token-wrong',
          },
        );
        statuses.push(res.status);
      }
      // AUTH_FAILURES_PER_SOURCE_AND_KEY=10: ten answered 401, the rest 429.
      expect(statuses.slice(0, 10), route.name).toEqual(Array(10).fill(401));
      expect(statuses.slice(10), route.name).toEqual(Array(SPOOFS.length - 10).fill(429));
    }
  });

  it("an attacker naming a victim's address cannot lock the victim's correct secret out", async () => {
    for (const route of routes()) {
      const app = await route.api.createApp({ name: 'victim' });
      const victim = route.client.replace(/\d+$/, (n) => String(Number(n) + 40));
      const attacker = route.client.replace(/\d+$/, (n) => String(Number(n) + 60));
      for (const style of ['X-Forwarded-For', 'Forwarded', 'X-Real-IP']) {
        for (let i = 0; i < 12; i++) {
          await postFrom(
            attacker,
            `${route.url}/v1/validate`,
            { pass_token: 'pt_x' },
            {
              [style]: style === 'Forwarded' ? `for=${victim}` : victim,
              'X-App-Key': app.appKey,
              'X-App-Secret': 'wrong-secret-wrong-secret',
            },
          );
        }
      }
      const own = await postFrom(
        victim,
        `${route.url}/v1/validate`,
        { pass_token: 'pt_x' },
        {
          'X-App-Key': app.appKey,
          'X-App-Secret': app.appSecret,
        },
      );
      expect(own.status, route.name).not.toBe(429);
      expect(own.body.error, route.name).toBe('token_not_found');
      // The attacker itself is refused by now.
      const again = await postFrom(
        attacker,
        `${route.url}/v1/validate`,
        { pass_token: 'pt_x' },
        {
          'X-App-Key': app.appKey,
          'X-App-Secret': 'wrong-secret-wrong-secret',
        },
      );
      expect(again.status, route.name).toBe(429);
    }
  });

  it('a risk signal stands on the real address: a denied network stays denied under any header', async () => {
    for (const route of routes()) {
      const app = await route.api.createApp({
        name: 'denied',
        risk_policy: { high: 'reject', reputation: { deny: [`${route.client}/32`] } },
      });
      for (const spoof of SPOOFS) {
        const res = await postFrom(
          route.client,
          `${route.url}/v1/challenge/init`,
          { app_key: app.appKey, action: 'login' },
          spoof,
        );
        expect(
          [403, 429],
          `${route.name} ${JSON.stringify(spoof)}: ${res.status} ${res.body?.error}`,
        ).toContain(res.status);
      }
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Endpoints,
  portClosed,
  Stack,
  servicesUp,
  standbyServing,
  standbyStatus,
  until,
} from './stack-harness.ts';

/**
 * `npm run stack` end to end: 2 regions × 2 API instances, both standby roles per region,
 * one shared PostgreSQL database and Redis. Every printed endpoint answers; `kill r1` makes r1's
 * standby serve (r2's stays online); `restart r1` brings r1 back and its standby steps back; Ctrl-C
 * stops every child.
 */

const run = await servicesUp('the stack test');

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.runIf(run)('npm run stack (2 regions × 2 instances)', () => {
  const stack = new Stack({ regions: 2, instances: 2, basePort: 28000, database: 'gatehouse_stack_test' });
  let e: Endpoints;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    const started = Date.now();
    e = await stack.ready();
    timings.ready = Date.now() - started;
  }, 200_000);

  afterAll(async () => {
    const code = await stack.stop();
    console.log(`stack test timings (ms): ${JSON.stringify(timings)}`);
    expect(code).toBe(0);
    // Every child is gone with it: no port of the stack answers.
    for (const r of e?.regions ?? []) {
      for (const url of [r.api, ...r.instances, r.bypass, r.fallback])
        expect(await portClosed(url), url).toBe(true);
    }
  }, 60_000);

  it('prints and writes every endpoint, and each answers', async () => {
    expect(stack.output()).toMatch(/r1: api http:\/\/127\.0\.0\.1:28000 \(instances/);
    expect(e.regions.map((r) => r.name)).toEqual(['r1', 'r2']);
    for (const r of e.regions) {
      expect(r.instances).toHaveLength(2);
      for (const url of [r.api, ...r.instances]) expect((await fetch(`${url}/readyz`)).status, url).toBe(200);
      // Both standby roles are up, hold the apps, and say service_online while their region is up.
      for (const url of [r.bypass, r.fallback]) expect(await standbyServing(url), url).toBe(false);
      const init = await post(`${r.bypass}/v1/challenge/init`, {
        app_key: e.apps.test.appKey,
        action: 'login',
      });
      expect(init).toMatchObject({ status: 503, body: { error: 'service_online' } });
      // The region's API (through its proxy) publishes its own standby hosts.
      const standby = (await (await fetch(`${r.api}/v1/standby`)).json()) as { data: unknown };
      expect(standby.data).toEqual({ bypass: [r.bypass], fallback: [r.fallback] });
    }
    const status = await stack.command('status');
    expect(status).toHaveLength(2);
    expect((await fetch(`${e.control}/status`)).status).toBe(200);
  });

  it("gives k6's apps the invisible tier even to a request that scores as a bot", async () => {
    // k6 cannot solve an image challenge: a tier that depends on the score would make the challenge
    // scenario flaky. A headless user agent and no browser headers score well over 35.
    for (const app of [e.apps.test, e.apps.real]) {
      const res = await fetch(`${e.regions[0]!.api}/v1/challenge/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'HeadlessChrome/130 python-requests' },
        body: JSON.stringify({ app_key: app.appKey, action: 'login' }),
      });
      const body = (await res.json()) as { data?: { tier?: string } };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.data?.tier).toBe('invisible');
    }
  });

  it('kill r1: its standby serves, r2 is untouched; restart r1: the standby steps back', async () => {
    const [r1, r2] = e.regions as [Endpoints['regions'][0], Endpoints['regions'][0]];
    const killedAt = Date.now();
    let mark = stack.printed;
    expect(await stack.command('kill r1')).toMatchObject({ killed: 'r1' });
    expect((await fetch(`${r1.api}/readyz`)).status).toBe(502);
    timings.switchOver = await until('r1 standby serving', () => standbyServing(r1.bypass), 15_000);
    await until('r1 fallback serving', () => standbyServing(r1.fallback), 15_000);
    timings.killToServing = Date.now() - killedAt;
    expect(await standbyServing(r2.bypass)).toBe(false);
    expect((await fetch(`${r2.api}/readyz`)).status).toBe(200);
    // The bypass host now serves the challenge flow (test-mode app: the invisible tier).
    const init = await post(`${r1.bypass}/v1/challenge/init`, {
      app_key: e.apps.test.appKey,
      action: 'login',
    });
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    expect(init.body.data).toMatchObject({ mode: 'challenge' });
    // The operator's probes found r1 down too and told both of its standbys to serve; r2's stay in auto.
    await stack.waitFor(
      /^operator: r1 main API down: standbys told to serve \(2\/2 acknowledged\)$/m,
      10_000,
      mark,
    );
    for (const url of [r1.bypass, r1.fallback]) expect((await standbyStatus(url)).mode, url).toBe('serve');
    expect((await standbyStatus(r2.bypass)).mode).toBe('auto');
    const [s1, s2] = (await stack.command('status')) as unknown as { operator: unknown }[];
    expect(s1?.operator).toMatchObject({ healthy: false, standbyMode: 'serve' });
    expect(s2?.operator).toMatchObject({ healthy: true, standbyMode: 'auto' });
    mark = stack.printed;

    const restartAt = Date.now();
    expect(await stack.command('restart r1')).toMatchObject({ restarted: 'r1' });
    timings.restartReady = Date.now() - restartAt;
    for (const url of r1.instances) expect((await fetch(`${url}/readyz`)).status, url).toBe(200);
    await until('r1 standby stepping back', async () => !(await standbyServing(r1.bypass)), 20_000);
    await until('r1 fallback stepping back', async () => !(await standbyServing(r1.fallback)), 20_000);
    timings.switchBack = Date.now() - restartAt;
    await stack.waitFor(
      /^operator: r1 main API healthy again: standbys told to auto \(2\/2 acknowledged\)$/m,
      10_000,
      mark,
    );
    for (const url of [r1.bypass, r1.fallback]) expect((await standbyStatus(url)).mode, url).toBe('auto');
    const again = await post(`${r1.bypass}/v1/challenge/init`, {
      app_key: e.apps.test.appKey,
      action: 'login',
    });
    expect(again).toMatchObject({ status: 503, body: { error: 'service_online' } });
  }, 120_000);
});

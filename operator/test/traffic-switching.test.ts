import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import type { App } from '../src/api/v1alpha1/app-types.ts';
import { loadOperatorConfig } from '../src/config.ts';
import { endpointSliceTargets } from '../src/health/standby-switch.ts';
import type { Manager } from '../src/manager.ts';
import { KubeClient } from '../src/runtime/kube-client.ts';
import {
  applyApp,
  condition,
  createNamespace,
  eventually,
  getApp,
  startClusterWithOperator,
  startOperator,
  testConfig,
} from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';
import { type StallProxy, startStallProxy } from './stall-proxy.ts';

const NS = 'payments';

/**
 * Health-probe switching against real processes: the main API (api/test/harness.ts) and a standby with
 * both roles (standby/src/standby.ts), wired as standby/test/standby.test.ts wires them. The standby's own
 * probes are slowed to a minute, so what moves it here is the operator. The operator probes at its
 * shipped settings (config.ts defaults) through a proxy that can stall, so "the main API stops
 * answering" is the worst case: probes that hang until their timeout. The switch times are printed
 * (the goals: serving <= 3 s after the main API stops answering, back <= 10 s after it answers);
 * the assertions are on behaviour, since a shared CI machine's timings are not the product's.
 */
describe.runIf(controlPlaneAvailable())(
  'probe switching: main API down -> standby serves -> main API back',
  () => {
    let cp: ControlPlane;
    let admin: KubeClient;
    let api: TestApi;
    let standby: RunningStandby;
    let manager: Manager;
    let appKey: string;
    let main: StallProxy;
    /** Every change of the standby's mode, as it saw it (polled every 20 ms). */
    const modes: { at: number; mode: string }[] = [];
    let watching: NodeJS.Timeout | undefined;
    const modeAt = (since: number, mode: string) => modes.find((m) => m.at >= since && m.mode === mode)?.at;
    const app = () => getApp(admin, NS, 'pay') as Promise<App>;
    const bypassInit = () =>
      fetch(`${standby.urls.bypass}/v1/challenge/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ app_key: 'ak_whoever', action: 'login' }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string } }));

    beforeAll(async () => {
      ({ cp, admin } = await startClusterWithOperator());
      await createNamespace(admin, NS);
      const store = new MemoryConsumptionStore();
      api = await startTestApi({}, undefined, { offlineStore: store });
      ({ appKey } = await api.createApp());
      standby = await startStandby(
        loadStandbyConfig({
          MAIN_API_URL: api.url,
          STANDBY_BYPASS_PORT: '0',
          STANDBY_FALLBACK_PORT: '0',
          STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
          // The standby's own credential, as the runtime Secret gives it: distinct from the admin token.
          STANDBY_SYNC_TOKEN: api.runtime.syncToken,
          STANDBY_PROBE_INTERVAL_MS: '60000',
        }),
        { store, logger: pino({ level: 'silent' }) },
      );
      expect(api.runtime.syncToken).not.toBe(api.runtime.adminToken);
      main = await startStallProxy('127.0.0.1', Number(new URL(api.url).port));
      watching = setInterval(() => {
        const mode = standby.health.status().mode;
        if (modes.at(-1)?.mode !== mode) modes.push({ at: Date.now(), mode });
      }, 20);
      const shipped = loadOperatorConfig([], {
        GATEHOUSE_ADMIN_URL: api.url,
        GATEHOUSE_ADMIN_TOKEN: api.runtime.adminToken,
      }).probe;
      manager = await startOperator(
        cp.kubeConfig('operator'),
        testConfig(api.url, api.runtime.adminToken, {
          standbyToken: api.runtime.syncToken,
          // The flap hold shortened so the flapping drill ends in seconds; the rest as shipped.
          probe: { ...shipped, flapHoldMs: 5000 },
        }),
        {
          standbyTargets: async (_app, r) =>
            r === 'eu' ? [standby.urls.bypass as string, standby.urls.fallback as string] : [],
        },
      );
    }, 300_000);
    afterAll(async () => {
      clearInterval(watching);
      await manager?.stop();
      await main?.close();
      await standby?.close();
      await api?.close();
      await cp?.stop();
    }, 60_000);

    it('starts on the main API; the standby answers service_online', async () => {
      await applyApp(
        admin,
        NS,
        'pay',
        appSpec({ regions: [region('eu', { probeUrl: `http://127.0.0.1:${main.port}` })] }),
      );
      const a = await eventually('eu healthy and registered', async () => {
        const x = await app();
        return (
          x.status?.regions?.[0]?.mainHealthy === true && condition(x, 'Registered')?.status === 'True' && x
        );
      });
      expect(a.status?.regions?.[0]).toMatchObject({ serving: 'main', mainHealthy: true });
      expect(condition(a, 'StandbyServing')).toMatchObject({ status: 'False', reason: 'MainApiServing' });
      expect(standby.health.status()).toMatchObject({ mode: 'auto', serving: false });
      expect((await bypassInit()).body.error).toBe('service_online');
      // Its sync credential got it the snapshot (the admin token would have been refused).
      expect(standby.snapshots.status()).toMatchObject({ loaded: true, apps: 1 });
    });

    it('after sustained probe failures the operator tells the standby to serve, and the status says so', async () => {
      const before = await app();
      await new Promise((r) => setTimeout(r, 1100));
      const pausedAt = Date.now();
      main.stall();
      const a = await eventually('serving=standby', async () => {
        const x = await app();
        return x.status?.regions?.[0]?.serving === 'standby' && x;
      });
      const servedAt = modeAt(pausedAt, 'serve');
      expect(servedAt).toBeDefined();
      console.log(
        `main API stopped answering -> standby told to serve in ${(servedAt ?? 0) - pausedAt} ms, status serving=standby in ${Date.now() - pausedAt} ms`,
      );
      expect(a.status?.regions?.[0]).toMatchObject({ mainHealthy: false, serving: 'standby' });
      expect(a.status?.regions?.[0]?.lastSwitchTime).toBeDefined();
      expect(condition(a, 'StandbyServing')).toMatchObject({ status: 'True', reason: 'MainApiUnhealthy' });
      expect(condition(a, 'Degraded')).toMatchObject({ status: 'True', reason: 'MainApiDown' });
      expect(condition(a, 'Ready')).toMatchObject({ status: 'False', reason: 'RegionOnStandby' });
      expect(condition(a, 'StandbyServing')?.lastTransitionTime).not.toBe(
        condition(before, 'StandbyServing')?.lastTransitionTime,
      );
      // Registration is not re-checked while nothing changed: the outage does not flip Registered.
      expect(condition(a, 'Registered')?.lastTransitionTime).toBe(
        condition(before, 'Registered')?.lastTransitionTime,
      );
      expect(standby.health.status()).toMatchObject({ mode: 'serve', serving: true });
      expect(await (await fetch(`${manager.metricsUrl}/metrics`)).text()).toMatch(
        new RegExp(
          `^gatehouse_operator_standby_serving\\{namespace="${NS}",app="pay",region="eu"\\} 1$`,
          'm',
        ),
      );
      // A standby process that restarts comes up in `auto`: it is told to serve again while the outage
      // lasts (standbyReassertMs, 2 s here, 30 s by default).
      standby.health.setMode('auto');
      const forgotAt = Date.now();
      await eventually('told to serve again', async () => standby.health.status().mode === 'serve', 10_000);
      console.log(`standby back in auto -> told to serve again in ${Date.now() - forgotAt} ms`);
      // Served from the snapshot: the app the API registered gets a real offline challenge.
      const served = await fetch(`${standby.urls.bypass}/v1/challenge/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ app_key: appKey, action: 'login' }),
      });
      expect(served.status).toBe(200);
      expect(((await served.json()) as { data?: { challenge_id?: string } }).data?.challenge_id).toBeTruthy();
      const events = await admin.list<{ reason: string; type: string }>(`/api/v1/namespaces/${NS}/events`);
      expect(events.items.find((e) => e.reason === 'StandbyActivated')?.type).toBe('Warning');
    });

    it('when the main API recovers, traffic returns: standby back to auto (service_online), status back to main', async () => {
      const before = await app();
      // Condition times have whole seconds: let one pass, so a transition shows as a new time.
      await new Promise((r) => setTimeout(r, 1100));
      const resumedAt = Date.now();
      main.resume();
      const a = await eventually('serving=main', async () => {
        const x = await app();
        return x.status?.regions?.[0]?.serving === 'main' && x;
      });
      const backAt = modeAt(resumedAt, 'auto');
      expect(backAt).toBeDefined();
      console.log(
        `main API answering again -> standby back to auto in ${(backAt ?? 0) - resumedAt} ms, status serving=main in ${Date.now() - resumedAt} ms`,
      );
      expect(a.status?.regions?.[0]?.mainHealthy).toBe(true);
      expect(condition(a, 'StandbyServing')).toMatchObject({ status: 'False', reason: 'MainApiServing' });
      expect(condition(a, 'StandbyServing')?.lastTransitionTime).not.toBe(
        condition(before, 'StandbyServing')?.lastTransitionTime,
      );
      expect(condition(a, 'Degraded')).toMatchObject({ status: 'False' });
      expect(standby.health.status()).toMatchObject({ mode: 'auto', serving: false });
      expect((await bypassInit()).body.error).toBe('service_online');
      const events = await admin.list<{ reason: string }>(`/api/v1/namespaces/${NS}/events`);
      expect(events.items.map((e) => e.reason)).toContain('MainApiRecovered');
    });

    it('a single failed probe does not switch (hysteresis)', async () => {
      const before = await app();
      await api.pause();
      await new Promise((r) => setTimeout(r, 150));
      await api.resume();
      await new Promise((r) => setTimeout(r, 1000));
      const a = await app();
      expect(a.status?.regions?.[0]?.serving).toBe('main');
      expect(condition(a, 'StandbyServing')?.lastTransitionTime).toBe(
        condition(before, 'StandbyServing')?.lastTransitionTime,
      );
      expect(standby.health.status().mode).toBe('auto');
    });

    it('a flapping main API (5 cycles of 3 s down / 3 s up): every outage is served, but the standby is not switched back and forth each cycle', async () => {
      const start = Date.now();
      for (let cycle = 0; cycle < 5; cycle++) {
        main.stall();
        await new Promise((r) => setTimeout(r, 3000));
        main.resume();
        await new Promise((r) => setTimeout(r, 3000));
      }
      const stoppedAt = Date.now();
      // After the flapping stops, traffic returns once the main API has answered for the flap hold.
      await eventually(
        'back to auto after the hold',
        async () => standby.health.status().mode === 'auto',
        30_000,
      );
      const during = modes.filter((m) => m.at >= start);
      const serves = during.filter((m) => m.mode === 'serve').length;
      const autos = during.filter((m) => m.mode === 'auto').length;
      console.log(
        `flapping 5 x (3 s down / 3 s up): ${serves} switches to serve, ${autos} back to auto; back ${Date.now() - stoppedAt} ms after the last cycle`,
      );
      // Undamped this is 5 each way. Damped: at most one return to the main API before the flapping is
      // seen (the first cycle, when the last recovery is over a flap window old), then the standby serves
      // until the main API has answered for the hold.
      expect(serves).toBeGreaterThanOrEqual(1);
      expect(serves).toBeLessThanOrEqual(2);
      expect(during.filter((m) => m.mode === 'auto' && m.at < stoppedAt).length).toBeLessThanOrEqual(1);
      expect(autos).toBeLessThanOrEqual(2);
      await eventually('status back to main', async () => {
        const region = (await app()).status?.regions?.[0];
        return region?.serving === 'main' && region.mainHealthy === true;
      });
    }, 90_000);

    it('in a cluster, the standby processes are found through the EndpointSlices of both standby Services', async () => {
      // No kubelet here, so no pod gets an address: the test writes the slices an EndpointSlice controller would.
      const slice = (role: string, addresses: string[][], port: number) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `pay-eu-${role}-x`,
          namespace: NS,
          labels: { 'kubernetes.io/service-name': `pay-eu-${role}` },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port, protocol: 'TCP' }],
        endpoints: addresses.map(([ip, state]) => ({
          addresses: [ip],
          conditions: { ready: state === 'ready', terminating: state === 'terminating' },
        })),
      });
      await admin.create(
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
        slice(
          'bypass',
          [
            ['10.1.0.1', 'ready'],
            ['10.1.0.2', 'starting'],
          ],
          8081,
        ),
      );
      await admin.create(
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
        slice(
          'fallback',
          [
            ['10.1.0.3', 'ready'],
            ['10.1.0.4', 'terminating'],
          ],
          8082,
        ),
      );
      // As the operator's service account: its RBAC must allow this.
      const targets = endpointSliceTargets(new KubeClient(cp.kubeConfig('operator')));
      expect((await targets(await app(), 'eu')).sort()).toEqual([
        'http://10.1.0.1:8081',
        'http://10.1.0.2:8081',
        'http://10.1.0.3:8082',
      ]);
    });
  },
);

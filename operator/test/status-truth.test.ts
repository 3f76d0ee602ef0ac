import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../src/manager.ts';
import type { KubeClient } from '../src/runtime/kube-client.ts';
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

const NS = 'truth';

/** Status says what is true: a standby nobody reached is not serving. */
describe.runIf(controlPlaneAvailable())('Truthful App status on a real kube-apiserver', () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  let api: TestApi;
  let manager: Manager;

  beforeAll(async () => {
    ({ cp, admin } = await startClusterWithOperator());
    await createNamespace(admin, NS);
    api = await startTestApi();
    manager = await startOperator(
      cp.kubeConfig('operator'),
      testConfig(api.url, api.runtime.adminToken, { standbyToken: 'sync' }),
      // The main API is down and no standby pod is listed (none ever started): nobody can serve.
      { probe: async () => false, standbyTargets: async () => [] },
    );
  }, 300_000);
  afterAll(async () => {
    await manager?.stop();
    await api?.close();
    await cp?.stop();
  }, 60_000);

  it('main API down and no standby acknowledged: serving none, Ready=False StandbyUnreachable, Warning events', async () => {
    await applyApp(admin, NS, 'dark', appSpec({ regions: [region('eu')] }));
    const app = await eventually('the verdict in status', async () => {
      const a = await getApp(admin, NS, 'dark');
      return a?.status?.regions?.[0]?.mainHealthy === false && a;
    });
    expect(app.status?.regions?.[0]?.serving).toBe('none');
    expect(condition(app, 'StandbyServing')).toMatchObject({
      status: 'False',
      reason: 'StandbyUnreachable',
      message: "Main API down and no standby serving in eu (0/0 standby processes acknowledged 'serve')",
    });
    expect(condition(app, 'Ready')).toMatchObject({ status: 'False', reason: 'StandbyUnreachable' });
    expect(condition(app, 'Degraded')).toMatchObject({ status: 'True', reason: 'MainApiDown' });
    const warnings = await eventually('the StandbyUnreachable event', async () => {
      const events = await admin.list<{ reason: string; type: string; count?: number }>(
        `/api/v1/namespaces/${NS}/events`,
      );
      const found = events.items.filter((e) => e.reason === 'StandbyUnreachable');
      return found.length > 0 && found;
    });
    expect(warnings.every((e) => e.type === 'Warning')).toBe(true);
    expect(
      (await admin.list<{ reason: string }>(`/api/v1/namespaces/${NS}/events`)).items.map((e) => e.reason),
    ).not.toContain('StandbyActivated');
  });
});

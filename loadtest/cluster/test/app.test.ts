import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { applyApp, deleteApp, installChart, NS, solveInAValidateInB, uninstallChart } from './gatehouse.ts';
import { clusterEnv, isReady, Kube } from './harness.ts';

/**
 * The chart installed with `helm install` on the local cluster, then an App applied as a platform team
 * would: its API and standby pods Ready in each region through their real probes, on that region's node;
 * a headless client solves a challenge through one region's API Service and the integrator validates the
 * pass token through the other region's (one database: a token minted in one region is claimed once,
 * anywhere); deleting the App removes every object the operator made for it.
 */

const skip = inject('clusterSkip');
const APP = 'shop';
const DATABASE = 'gatehouse_cluster_app';
const timings: Record<string, number> = {};

describe.skipIf(skip)('the chart and an App on real pods', () => {
  const kube = skip ? (undefined as unknown as Kube) : new Kube();
  const regions = skip ? [] : (clusterEnv().CLUSTER_REGIONS ?? '').split(' ');

  beforeAll(async () => {
    const started = Date.now();
    await installChart(DATABASE);
    timings.helmInstallMs = Date.now() - started;
  });

  afterAll(async () => {
    if (skip) return;
    console.log(`chart and App timings (ms): ${JSON.stringify(timings)}`);
    await uninstallChart(DATABASE);
  });

  it('runs the operator and the admin API from the chart, Ready through their probes', async () => {
    const pods = await kube.list(`/api/v1/namespaces/${NS}/pods`);
    const of = (c: string) => pods.filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === c);
    expect(of('operator').length).toBeGreaterThanOrEqual(1);
    expect(of('admin-api').length).toBeGreaterThanOrEqual(1);
    for (const p of [...of('operator'), ...of('admin-api')]) {
      expect(isReady(p), p.metadata.name).toBe(true);
      expect(p.spec.containers[0].readinessProbe, p.metadata.name).toBeDefined();
    }
  });

  it('makes API and standby pods Ready in each region, on that region’s node', async () => {
    const started = Date.now();
    const pods = await applyApp(kube, APP, regions);
    timings.appReadyMs = Date.now() - started;
    for (const p of pods) {
      const region = p.metadata.labels?.['gatehouse.dev/region'];
      expect(p.spec.nodeName, p.metadata.name).toBe(`node-${region}`);
      expect(p.spec.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
    }
    const roles = pods.map(
      (p) =>
        `${p.metadata.labels?.['gatehouse.dev/region']}/${p.metadata.labels?.['app.kubernetes.io/component']}`,
    );
    for (const r of regions)
      for (const role of ['api', 'bypass', 'fallback']) expect(roles).toContain(`${r}/${role}`);
    const app = await kube.get(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`);
    expect(app.status?.appKey).toMatch(/^ak_/);
  });

  it('solves a challenge through one region’s API Service and validates it once through the other’s', async () => {
    await solveInAValidateInB(kube, APP, regions as [string, string], 22621);
  });

  it('removes every object it made for the App when the App is deleted', async () => {
    const started = Date.now();
    await deleteApp(kube, APP);
    timings.appDeletedMs = Date.now() - started;
  });
});

import { Gatehouse } from '@gatehouse/node';
import { solveChallenge } from '@gatehouse/node/headless';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { appCredentials, applyApp, installChart, NS, ownedBy, uninstallChart } from './gatehouse.ts';
import { clusterEnv, forward, Kube, podReady, script, waitFor } from './harness.ts';

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
      expect(podReady(p), p.metadata.name).toBe(true);
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
    const [a, b] = regions as [string, string];
    const apiA = await forward('app-api-a', 22621, `${NS}/${APP}-${a}-api:80`, a);
    const apiB = await forward('app-api-b', 22622, `${NS}/${APP}-${b}-api:80`, b);
    const { appKey, appSecret } = await appCredentials(kube, APP);

    const solved = await solveChallenge({ baseUrl: apiA, appKey, action: 'login', bypassServers: [] });
    expect(solved).toMatchObject({ route: 'main', tier: 'invisible', clientOnly: false });
    expect(solved.passToken).toMatch(/^pt_/);

    const inB = new Gatehouse({ appKey, appSecret, baseUrl: apiB, maxRetries: 0, backupServers: [] });
    const first = await inB.validate(solved.passToken, { expectedAction: 'login' });
    expect(first, JSON.stringify(first)).toMatchObject({ valid: true, accepted: true, action: 'login' });
    const inA = new Gatehouse({ appKey, appSecret, baseUrl: apiA, maxRetries: 0, backupServers: [] });
    const again = await inA.validate(solved.passToken, { expectedAction: 'login' });
    expect(again).toMatchObject({ valid: false, errorCode: 'token_already_used' });
    await script('forward.sh', 'stop', 'app-api-a');
    await script('forward.sh', 'stop', 'app-api-b');
  });

  it('removes every object it made for the App when the App is deleted', async () => {
    const started = Date.now();
    expect(await kube.delete(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`)).toBe(200);
    const owned = ownedBy(APP);
    await waitFor('the App and its objects gone', 120_000, async () => {
      const left = [
        ...(await kube.list(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps`)).filter(
          (x) => x.metadata.name === APP,
        ),
        ...(await kube.list(`/apis/apps/v1/namespaces/${NS}/deployments?${owned}`)),
        ...(await kube.list(`/api/v1/namespaces/${NS}/services?${owned}`)),
        ...(await kube.list(`/api/v1/namespaces/${NS}/pods?${owned}`)),
        ...(await kube.list(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets?${owned}`)),
        ...(await kube.list(`/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses?${owned}`)),
      ];
      return left.length === 0;
    });
    timings.appDeletedMs = Date.now() - started;
  });
});

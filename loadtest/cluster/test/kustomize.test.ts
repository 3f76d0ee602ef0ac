import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  applyApp,
  databaseUrl,
  deleteApp,
  dropDatabase,
  freshDatabase,
  NS,
  solveInAValidateInB,
} from './gatehouse.ts';
import { clusterEnv, isReady, Kube, type KubeObject, ROOT, run, TOOLS_BIN, waitFor } from './harness.ts';

/**
 * The manifests of `k8s/` installed without Helm, as docs/deploy.md ("With kustomize") tells a platform
 * team: the Secrets first, then `kustomize build | kubectl apply --server-side` of `k8s/base` through the
 * local cluster's overlay (loadtest/cluster/kustomize: the images built here, the admin API's node). The
 * operator and the admin API come up through their probes, an App goes live in both regions and a pass
 * token minted in one is validated once in the other; removing the App and the manifests leaves nothing.
 */

const skip = inject('clusterSkip');
const APP = 'kshop';
const DATABASE = 'gatehouse_cluster_kustomize';
const timings: Record<string, number> = {};

const secret = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: NS },
  type: 'Opaque',
  stringData: data,
});

describe.skipIf(skip)('k8s/ installed with kustomize on real pods', () => {
  const kube = skip ? (undefined as unknown as Kube) : new Kube();
  const regions = skip ? [] : (clusterEnv().CLUSTER_REGIONS ?? '').split(' ');
  let objects: KubeObject[] = [];

  beforeAll(async () => {
    const started = Date.now();
    await freshDatabase(DATABASE);
    const { stdout } = await run(join(TOOLS_BIN, 'kustomize'), ['build', 'loadtest/cluster/kustomize'], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    });
    objects = (loadAll(stdout) as KubeObject[]).filter(Boolean);
    const env = clusterEnv();
    // The order of docs/deploy.md: the namespace, its Secrets, then everything kustomize built.
    const namespace = objects.find((o) => o.kind === 'Namespace');
    if (!namespace) throw new Error('kustomize built no Namespace');
    await kube.apply(namespace);
    await kube.apply(secret('gatehouse-admin', { GATEHOUSE_ADMIN_TOKEN: randomBytes(32).toString('hex') }));
    await kube.apply(
      secret('gatehouse-runtime', {
        DATABASE_URL: databaseUrl(DATABASE),
        STANDBY_STORE_URL: `redis://${env.CLUSTER_REDIS_HOST}/0`,
        REDIS_URL: `redis://${env.CLUSTER_REDIS_HOST}/1`,
        STANDBY_SYNC_TOKEN: randomBytes(32).toString('hex'),
      }),
    );
    for (const r of regions)
      await kube.apply(secret(`gatehouse-db-${r}`, { DATABASE_URL: databaseUrl(DATABASE) }));
    for (const o of objects) {
      await kube.apply(o);
      if (o.kind === 'CustomResourceDefinition')
        await waitFor(`${o.metadata.name} Established`, 60_000, async () => {
          const crd = await kube.get(
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${o.metadata.name}`,
          );
          return crd.status?.conditions?.some(
            (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
          );
        });
    }
    timings.appliedMs = Date.now() - started;
  });

  afterAll(async () => {
    if (skip) return;
    console.log(`kustomize install timings (ms): ${JSON.stringify(timings)}`);
    // Everything the manifests made, the namespace last (its deletion takes the Secrets and the pods).
    for (const o of [...objects].reverse()) await kube.call('DELETE', await kube.pathOf(o)).catch(() => {});
    await waitFor(
      `namespace ${NS} gone`,
      180_000,
      async () => (await kube.call('GET', `/api/v1/namespaces/${NS}`)).status === 404,
    ).catch((e) => console.warn(e));
    await dropDatabase(DATABASE);
  });

  it('runs the operator and the admin API, Ready through their probes', async () => {
    const started = Date.now();
    const pods = await waitFor('the operator and the admin API Ready', 180_000, async () => {
      const items = await kube.list(`/api/v1/namespaces/${NS}/pods`);
      const of = (c: string) => items.filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === c);
      const ready = [...of('operator'), ...of('admin-api')].filter(isReady);
      return ready.length >= 2 && of('operator').some(isReady) && of('admin-api').some(isReady)
        ? ready
        : undefined;
    });
    timings.readyMs = Date.now() - started;
    for (const p of pods) {
      expect(p.spec.containers[0].image, p.metadata.name).toMatch(/^localhost\/gatehouse\//);
      expect(p.spec.containers[0].readinessProbe, p.metadata.name).toBeDefined();
    }
    const admin = pods.find((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'admin-api');
    expect(admin?.spec.nodeName).toBe(`node-${regions[0]}`);
  });

  it('makes an App live in each region and validates a pass token across them once', async () => {
    const started = Date.now();
    const pods = await applyApp(kube, APP, regions, 1);
    timings.appReadyMs = Date.now() - started;
    for (const p of pods)
      expect(p.spec.nodeName, p.metadata.name).toBe(`node-${p.metadata.labels?.['gatehouse.dev/region']}`);
    await solveInAValidateInB(kube, APP, regions as [string, string], 22641);
  });

  it('removes what it made for the App when the App is deleted', async () => {
    const started = Date.now();
    await deleteApp(kube, APP);
    timings.appDeletedMs = Date.now() - started;
  });
});

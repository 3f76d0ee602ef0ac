import { describe, expect, it } from 'vitest';
import type { App } from '../src/api/v1alpha1/app-types.ts';
import { FINALIZER } from '../src/api/v1alpha1/groupversion.ts';
import {
  DEPLOYMENTS,
  INGRESSES,
  NETWORK_POLICIES,
  PDBS,
  resourcePath,
  SERVICES,
} from '../src/runtime/resources.ts';
import { applyApp, condition, eventually, getApp } from './cluster.ts';
import { controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';
import { markPodsReady, namesOf, type Obj, secretData } from './objects.ts';
import { useOperatorWithApi } from './operator-with-api.ts';

const NS = 'shop';

describe.runIf(controlPlaneAvailable())(
  'App lifecycle on a real kube-apiserver + etcd + kube-controller-manager',
  () => {
    const f = useOperatorWithApi({ namespaces: [NS], operator: { processMetrics: true } });
    const list = (type: typeof DEPLOYMENTS) => f.admin.list<Obj>(resourcePath(type, NS)).then((l) => l.items);
    const adminGet = async (appKey: string) =>
      (
        await fetch(`${f.api.url}/admin/v1/apps/${appKey}`, {
          headers: { Authorization: `Bearer ${f.api.runtime.adminToken}` },
        }).then((r) => r.json())
      ).data;
    const app = () => getApp(f.admin, NS, 'shop') as Promise<App>;

    it('exports its process metrics on /metrics: resident memory, heap, event-loop lag', async () => {
      const metrics = await (await fetch(`${f.manager.metricsUrl}/metrics`)).text();
      const value = (name: string) => Number(metrics.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);
      expect(value('process_resident_memory_bytes')).toBeGreaterThan(10 * 2 ** 20);
      expect(value('nodejs_heap_size_used_bytes')).toBeGreaterThan(2 ** 20);
      expect(metrics).toMatch(/^nodejs_eventloop_lag_p99_seconds \S+$/m);
    });

    it('creating an App creates its Deployments, Services, PDBs, Ingresses and Secret, and registers the app', async () => {
      await applyApp(f.admin, NS, 'shop', {
        ...appSpec({ monthlyQuota: 50_000, riskPolicy: { invisible_below: 30 } }),
      });
      const deployments = await eventually('6 Deployments', async () =>
        (await list(DEPLOYMENTS)).length === 6 ? list(DEPLOYMENTS) : null,
      );
      expect(namesOf(deployments)).toEqual([
        'shop-eu-api',
        'shop-eu-bypass',
        'shop-eu-fallback',
        'shop-us-api',
        'shop-us-bypass',
        'shop-us-fallback',
      ]);
      // Behind the Ingress controller: the pods trust its cluster-private addresses, never TRUST_PROXY.
      for (const d of deployments) {
        const env = (
          d as unknown as {
            spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
          }
        ).spec.template.spec.containers[0]?.env;
        expect(env?.find((e) => e.name === 'TRUSTED_PROXIES')?.value).toBe('private');
        expect(env?.map((e) => e.name)).not.toContain('TRUST_PROXY');
      }
      // The operator applies each kind in turn: on a busy machine the Deployments can be there before the rest.
      const all = (kind: typeof DEPLOYMENTS, n: number) =>
        eventually(`${n} of ${JSON.stringify(kind)}`, async () =>
          (await list(kind)).length >= n ? list(kind) : null,
        );
      expect(namesOf(await all(SERVICES, 6))).toEqual(namesOf(deployments));
      expect(namesOf(await all(PDBS, 6))).toEqual(namesOf(deployments));
      expect(namesOf(await all(INGRESSES, 2))).toEqual(['shop-eu', 'shop-us']);
      expect(namesOf(await all(NETWORK_POLICIES, 4))).toEqual([
        'shop-eu-api',
        'shop-eu-standby',
        'shop-us-api',
        'shop-us-standby',
      ]);
      const secret = await eventually('the credentials Secret', () =>
        secretData(f.admin, NS, 'shop-credentials'),
      );
      expect(secret.app_key).toMatch(/^ak_/);
      expect(secret.app_secret?.length).toBeGreaterThan(20);
      const registered = await eventually(
        'Registered=True',
        async () => condition(await app(), 'Registered')?.status === 'True' && app(),
      );
      expect(registered.status?.appKey).toBe(secret.app_key);
      expect(registered.metadata.finalizers).toContain(FINALIZER);
      // Every write of the operator's is recorded under its own name, the finalizer's patch too.
      const { managedFields } = registered.metadata as { managedFields?: { manager: string }[] };
      const managers = (managedFields ?? []).map((f) => f.manager);
      expect(managers).toContain('gatehouse-operator');
      expect(managers).not.toContain('undici');
      expect(await adminGet(secret.app_key as string)).toMatchObject({
        name: 'shop/shop',
        plan: 'pro',
        monthly_quota: 50_000,
        allowed_domains: ['shop.example'],
        risk_policy: { invisible_below: 30 },
        // The console shows it read-only, naming the custom resource.
        managed_by: { kind: 'App', namespace: NS, name: 'shop' },
        disabled: false,
      });
      // kube-controller-manager turns each Deployment into a ReplicaSet (and Pods that stay Pending here).
      const owned = await eventually('a ReplicaSet per Deployment', async () => {
        const rs = await f.admin.list<Obj>(`/apis/apps/v1/namespaces/${NS}/replicasets`);
        return rs.items.length >= 6 && rs.items;
      });
      expect(owned.every((r) => r.metadata.ownerReferences?.[0]?.kind === 'Deployment')).toBe(true);
      const status = await eventually(
        'conditions from the Deployments, verdicts from the probes',
        async () => {
          const a = await app();
          const probed = a.status?.regions?.every((r) => r.mainHealthy === true);
          return condition(a, 'Progressing')?.status === 'True' && probed && a;
        },
      );
      expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'WorkloadsUnavailable' });
      // It says why: the Deployment's own conditions and what its pods say (no scheduler here).
      const why = await eventually('Ready says why the workloads are unavailable', async () => {
        const message = condition(await app(), 'Ready')?.message ?? '';
        return message.includes('pods: 2 Pending, not scheduled') && message;
      });
      expect(why).toMatch(
        /shop-eu-api \(0\/2 available; Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability\.; pods: 2 Pending, not scheduled\)/,
      );
      expect(condition(status, 'Progressing')).toMatchObject({ reason: 'RollingOut' });
      expect(condition(status, 'StandbyServing')).toMatchObject({
        status: 'False',
        reason: 'MainApiServing',
      });
      expect(status.status?.observedGeneration).toBe(1);
      expect(status.status?.regions?.map((r) => [r.name, r.serving, r.mainHealthy])).toEqual([
        ['eu', 'main', true],
        ['us', 'main', true],
      ]);
      const events = await f.admin.list<Obj & { reason: string }>(`/api/v1/namespaces/${NS}/events`);
      expect(events.items.map((e) => e.reason)).toEqual(
        expect.arrayContaining(['Registered', 'CredentialsCreated', 'WorkloadsUnavailable', 'RollingOut']),
      );
      // One Event per condition transition, not per reconcile.
      const transitions = events.items.filter((e) => e.reason === 'WorkloadsUnavailable') as (Obj & {
        count?: number;
        type?: string;
      })[];
      expect(transitions).toHaveLength(1);
      expect(transitions[0]).toMatchObject({ type: 'Warning', count: 1 });
    });

    it('changing replicas, image and plan rolls the Deployments and updates the app; lastTransitionTime holds', async () => {
      const before = await app();
      // Someone clears managed_by by hand: the update puts it back with the new plan.
      const cleared = await fetch(`${f.api.url}/admin/v1/apps/${before.status?.appKey}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${f.api.runtime.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ managed_by: null }),
      });
      expect(cleared.status).toBe(200);
      expect((await adminGet(before.status?.appKey as string)).managed_by).toBeNull();
      await applyApp(f.admin, NS, 'shop', {
        ...appSpec({
          plan: 'enterprise',
          monthlyQuota: 50_000,
          images: { api: 'registry.invalid/gatehouse/api:2' },
        }),
        regions: [
          region('eu', { locality: 'europe-west1', replicas: 3 }),
          region('us', { locality: 'us-east1' }),
        ],
      });
      const dep = await eventually('shop-eu-api to be updated', async () => {
        const d = await f.admin.get<Obj>(resourcePath(DEPLOYMENTS, NS, 'shop-eu-api'));
        return d.spec?.replicas === 3 && d;
      });
      expect(dep.spec?.template?.spec?.containers?.[0]?.image).toBe('registry.invalid/gatehouse/api:2');
      await eventually('a second ReplicaSet for the new image (a rollout)', async () => {
        const rs = await f.admin.list<Obj>(`/apis/apps/v1/namespaces/${NS}/replicasets`);
        const mine = rs.items.filter((r) => r.metadata.ownerReferences?.[0]?.name === 'shop-eu-api');
        return (
          mine.some((r) => r.spec?.template?.spec?.containers?.[0]?.image?.endsWith(':2')) &&
          mine.length === 2
        );
      });
      const after = await eventually('observedGeneration 2', async () => {
        const a = await app();
        return a.status?.observedGeneration === 2 && a;
      });
      expect(await adminGet(after.status?.appKey as string)).toMatchObject({
        plan: 'enterprise',
        managed_by: { kind: 'App', namespace: NS, name: 'shop' },
      });
      for (const type of ['Registered', 'Ready', 'StandbyServing']) {
        expect(condition(after, type)?.lastTransitionTime).toBe(condition(before, type)?.lastTransitionTime);
      }
    });

    it('with every pod marked Ready (a stand-in for a kubelet), the App becomes Ready and Progressing ends', async () => {
      const before = await app();
      // Condition times have whole seconds: let one pass since Ready=False so the new time must differ.
      const since = Date.parse(condition(before, 'Ready')?.lastTransitionTime ?? '');
      await new Promise((r) => setTimeout(r, Math.max(0, since + 1_000 - Date.now())));
      const ready = await eventually(
        'Ready=True',
        async () => {
          await markPodsReady(f.admin, NS);
          const a = await app();
          if (condition(a, 'Ready')?.status !== 'True') throw new Error(condition(a, 'Ready')?.message);
          return a;
        },
        90_000,
      );
      expect(condition(ready, 'Ready')).toMatchObject({ reason: 'AllRegionsServing' });
      expect(condition(ready, 'Ready')?.lastTransitionTime).not.toBe(
        condition(before, 'Ready')?.lastTransitionTime,
      );
      const done = await eventually(
        'Progressing=False (the rollout finishes as new pods turn Ready)',
        async () => {
          await markPodsReady(f.admin, NS);
          const a = await app();
          if (condition(a, 'Progressing')?.status !== 'False')
            throw new Error(condition(a, 'Progressing')?.message);
          return a;
        },
        60_000,
      );
      expect(done.status?.regions?.[0]?.availableReplicas).toEqual({ api: 3, bypass: 2, fallback: 2 });
    }, 120_000);

    it('removing a region deletes its objects', async () => {
      await applyApp(f.admin, NS, 'shop', appSpec({ regions: [region('eu', { locality: 'europe-west1' })] }));
      await eventually('the us objects to go', async () => {
        const all = [
          ...(await list(DEPLOYMENTS)),
          ...(await list(SERVICES)),
          ...(await list(PDBS)),
          ...(await list(INGRESSES)),
        ];
        return all.every((o) => !o.metadata.name.startsWith('shop-us')) && all.length === 10;
      });
      const a = await eventually('status with one region', async () =>
        (await app()).status?.regions?.length === 1 ? app() : null,
      );
      expect(a.status?.regions?.[0]?.name).toBe('eu');
    });

    it('the admin API being away fails registration softly: workloads are still applied, and it recovers', async () => {
      await f.api.pause();
      try {
        await applyApp(f.admin, NS, 'late', appSpec({ regions: [region('eu')] }));
        await eventually(
          'the late App Deployments',
          async () =>
            (await list(DEPLOYMENTS)).filter((d) => d.metadata.name.startsWith('late-')).length === 3,
        );
        const down = await eventually('Registered=False', async () => {
          const a = await getApp(f.admin, NS, 'late');
          return condition(a, 'Registered')?.status === 'False' && a;
        });
        expect(condition(down, 'Registered')).toMatchObject({ reason: 'AdminApiError' });
        expect(condition(down, 'Degraded')).toMatchObject({ status: 'True', reason: 'ReconcileError' });
      } finally {
        await f.api.resume();
      }
      const up = await eventually(
        'Registered=True after the admin API returns',
        async () => {
          const a = await getApp(f.admin, NS, 'late');
          return condition(a, 'Registered')?.status === 'True' && a;
        },
        60_000,
      );
      expect(up.status?.appKey).toMatch(/^ak_/);
    });

    it('deleting an App disables it in the service, and the garbage collector removes its objects', async () => {
      const appKey = (await app()).status?.appKey as string;
      await f.admin.delete(
        resourcePath(
          { group: 'gatehouse.dev', version: 'v1alpha1', plural: 'apps', kind: 'App' },
          NS,
          'shop',
        ),
      );
      await eventually(
        'the App to be gone (finalizer done)',
        async () => (await getApp(f.admin, NS, 'shop')) === null,
      );
      expect((await adminGet(appKey)).disabled).toBe(true);
      await eventually(
        'its Deployments, Services, PDBs, Ingress and Secret to be collected',
        async () => {
          const left = [
            ...(await list(DEPLOYMENTS)),
            ...(await list(SERVICES)),
            ...(await list(PDBS)),
            ...(await list(INGRESSES)),
          ];
          const secret = await secretData(f.admin, NS, 'shop-credentials');
          return !secret && left.every((o) => !o.metadata.name.startsWith('shop-'));
        },
        90_000,
      );
    }, 120_000);
  },
);

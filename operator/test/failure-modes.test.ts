import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { MemoryConsumptionStore } from '@gatehouse/core/offline-consumption';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStandbyConfig } from '../../standby/src/config.ts';
import { type RunningStandby, startStandby } from '../../standby/src/standby.ts';
import type { App } from '../src/api/v1alpha1/app-types.ts';
import { appCrd } from '../src/api/v1alpha1/crd.ts';
import { FINALIZER, SKIP_CLEANUP_ANNOTATION } from '../src/api/v1alpha1/groupversion.ts';
import type { OperatorConfig } from '../src/config.ts';
import { CRD_VERSION_ANNOTATION, OPERATOR_VERSION } from '../src/crd-upgrade.ts';
import { httpProbe } from '../src/health/prober.ts';
import { endpointSliceTargets } from '../src/health/standby-switch.ts';
import type { Manager } from '../src/manager.ts';
import { KubeClient } from '../src/runtime/kube-client.ts';
import {
  APPS,
  DEPLOYMENTS,
  ENDPOINT_SLICES,
  INGRESSES,
  NETWORK_POLICIES,
  PDBS,
  resourcePath,
  SECRETS,
  SERVICES,
} from '../src/runtime/resources.ts';
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
import { namesOf, type Obj, secretData } from './objects.ts';

/*
 * What production clusters do to the operator, one finding per test, on a real kube-apiserver + etcd +
 * kube-controller-manager with the operator running as its service account against a real main API.
 * docs/operator.md's failure-mode table names these tests.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A reverse proxy in front of the admin API that counts requests by `METHOD path`. */
async function countingProxy(target: string) {
  const counts = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const key = `${req.method} ${req.url?.replace(/ak_[A-Za-z0-9_-]+/, ':key')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      const upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => ['authorization', 'content-type'].includes(k)),
        ) as Record<string, string>,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    count: (key: string) => counts.get(key) ?? 0,
    close: () => new Promise((ok) => server.close(ok)),
  };
}

describe.runIf(controlPlaneAvailable())('operator failure modes on a real control plane', () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  let api: TestApi;
  let standby: RunningStandby;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  let manager: Manager | undefined;
  /** Standby processes listen on loopback, which EndpointSlices refuse: slices name 10.99.0.x, mapped back here. */
  const FAKE = { bypass: '10.99.0.1', fallback: '10.99.0.2' };
  const port = (url: string | undefined) => Number(new URL(url ?? '').port);

  const start = async (over: Partial<OperatorConfig> = {}) => {
    await manager?.stop();
    const sliceTargets = endpointSliceTargets(new KubeClient(cp.kubeConfig('operator')));
    manager = await startOperator(
      cp.kubeConfig('operator'),
      // A resync far beyond each test: what happens, happens through watches.
      testConfig(proxy.url, api.runtime.adminToken, {
        standbyToken: api.runtime.syncToken,
        resyncMs: 600_000,
        ...over,
      }),
      {
        // Only the slices test probes a real main API; the other Apps' public hosts do not exist here.
        probe: (url, timeoutMs) => (url === api.url ? httpProbe(url, timeoutMs) : Promise.resolve(true)),
        standbyTargets: async (app, r) =>
          (await sliceTargets(app, r)).map((u) => u.replace(/10\.99\.0\.\d+/, '127.0.0.1')),
      },
    );
    return manager;
  };
  const list = (type: typeof DEPLOYMENTS, ns: string) =>
    admin.list<Obj>(resourcePath(type, ns)).then((l) => l.items);
  const events = async (ns: string, reason: string) =>
    (await admin.list<{ reason: string; count?: number }>(`/api/v1/namespaces/${ns}/events`)).items
      .filter((e) => e.reason === reason)
      .reduce((n, e) => n + (e.count ?? 1), 0);
  const registered = (ns: string, name: string) =>
    eventually(`${ns}/${name} Registered=True`, async () => {
      const a = await getApp(admin, ns, name);
      return condition(a, 'Registered')?.status === 'True' && a;
    });

  beforeAll(async () => {
    ({ cp, admin } = await startClusterWithOperator());
    for (const ns of ['watched', 'prune', 'slices', 'drift', 'deletion', 'hpa'])
      await createNamespace(admin, ns);
    const store = new MemoryConsumptionStore();
    api = await startTestApi({}, undefined, { offlineStore: store });
    proxy = await countingProxy(api.url);
    standby = await startStandby(
      loadStandbyConfig({
        MAIN_API_URL: api.url,
        STANDBY_BYPASS_PORT: '0',
        STANDBY_FALLBACK_PORT: '0',
        STANDBY_DATA_DIR: mkdtempSync(join(tmpdir(), 'standby-')),
        STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        STANDBY_PROBE_INTERVAL_MS: '60000',
      }),
      { store, logger: pino({ level: 'silent' }) },
    );
    await start();
  }, 300_000);
  afterAll(async () => {
    await manager?.stop();
    await standby?.close();
    await proxy?.close();
    await api?.close();
    await cp?.stop();
  }, 60_000);

  it('owned objects are watched: a deleted Deployment, Service, PDB, Ingress, NetworkPolicy or credentials Secret is back within seconds, an edited Deployment put back', async () => {
    const NS = 'watched';
    await applyApp(admin, NS, 'w', appSpec({ regions: [region('eu')] }));
    const before = await registered(NS, 'w');
    await eventually('the objects', async () => (await list(INGRESSES, NS)).length === 1);
    await eventually('the NetworkPolicies', async () => (await list(NETWORK_POLICIES, NS)).length === 2);
    const victims = [
      { type: DEPLOYMENTS, name: 'w-eu-fallback' },
      { type: NETWORK_POLICIES, name: 'w-eu-api' },
      { type: SERVICES, name: 'w-eu-api' },
      { type: PDBS, name: 'w-eu-bypass' },
      { type: INGRESSES, name: 'w-eu' },
      { type: SECRETS, name: 'w-credentials' },
    ];
    const uids = new Map<string, string>();
    for (const v of victims) {
      const o = await admin.get<Obj & { metadata: { uid: string } }>(resourcePath(v.type, NS, v.name));
      uids.set(v.name, o.metadata.uid);
    }
    const deletedAt = Date.now();
    for (const v of victims) await admin.delete(resourcePath(v.type, NS, v.name));
    for (const v of victims) {
      await eventually(
        `${v.type.kind} ${v.name} recreated`,
        async () => {
          const o = await admin.getOrNull<{ metadata: { uid: string } }>(resourcePath(v.type, NS, v.name));
          return o && o.metadata.uid !== uids.get(v.name);
        },
        10_000,
      );
    }
    console.log(`6 deleted owned objects recreated within ${Date.now() - deletedAt} ms (resync: 10 min)`);
    // An edit by someone else (kubectl scale) is put back: the operator's apply takes its fields again.
    const api = resourcePath(DEPLOYMENTS, NS, 'w-eu-api');
    await admin.mergePatch(api, { spec: { replicas: 5 } }, 'kubectl-scale');
    const editedAt = Date.now();
    await eventually(
      'the edited Deployment put back',
      async () => (await admin.get<{ spec: { replicas: number } }>(api)).spec.replicas === 2,
      10_000,
    );
    console.log(`an edited Deployment was put back within ${Date.now() - editedAt} ms`);
    // The Secret comes back with the same app and a new secret (the old one was in the deleted object).
    const secret = await secretData(admin, NS, 'w-credentials');
    expect(secret?.app_key).toBe(before.status?.appKey);
  }, 60_000);

  it('a removed region is pruned even when a step failed in the generation that removed it', async () => {
    const NS = 'prune';
    await applyApp(admin, NS, 'p', appSpec());
    await eventually('both regions', async () => (await list(DEPLOYMENTS, NS)).length === 6);
    await registered(NS, 'p');
    // A policy (as a cluster's admission policies do) refuses the operator's PodDisruptionBudget writes.
    await admin.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'refuse-pdbs' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['policy'],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['poddisruptionbudgets'],
            },
          ],
        },
        validations: [{ expression: 'false', message: 'PDBs are frozen by the test' }],
      },
    });
    const binding = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
    await admin.create(binding, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'refuse-pdbs' },
      spec: {
        policyName: 'refuse-pdbs',
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } },
      },
    });
    // Admission policies take effect a moment after they are written: wait until a dry run is refused.
    await eventually('the policy in force', async () => {
      const res = await cp.call('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets?dryRun=All`, {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'probe' },
        spec: { maxUnavailable: 1, selector: { matchLabels: { x: 'y' } } },
      });
      return res.status === 403 || res.status === 422;
    });
    // Unchanged objects are not applied again: a PDB the operator has to write again (deleted) makes
    // its step fail.
    await admin.delete(resourcePath(PDBS, NS, 'p-eu-api'));
    await applyApp(admin, NS, 'p', appSpec({ regions: [region('eu', { locality: 'europe-west1' })] }));
    const failed = await eventually('the failing generation seen', async () => {
      const a = await getApp(admin, NS, 'p');
      return (
        a?.metadata.generation === 2 && condition(a, 'Degraded')?.message?.includes('PDBs are frozen') && a
      );
    });
    await admin.delete(`${binding}/refuse-pdbs`);
    await eventually(
      'the us objects to go once the policy is lifted',
      async () => {
        const all = [
          ...(await list(DEPLOYMENTS, NS)),
          ...(await list(SERVICES, NS)),
          ...(await list(PDBS, NS)),
          ...(await list(INGRESSES, NS)),
        ];
        return all.every((o) => !o.metadata.name.startsWith('p-us')) && all.length === 10;
      },
      20_000,
    );
    const done = await eventually('observedGeneration 2', async () => {
      const a = await getApp(admin, NS, 'p');
      return a?.status?.observedGeneration === 2 && a;
    });
    expect(condition(done, 'Degraded')?.status).toBe('False');
    // While the step failed: Ready said so, and observedGeneration stayed on the generation carried out.
    expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'ReconcileError' });
    expect(condition(failed, 'Degraded')).toMatchObject({ status: 'True', reason: 'ReconcileError' });
    expect(await events(NS, 'ReconcileFailed')).toBeGreaterThan(0);
    const metrics = await (await fetch(`${manager!.metricsUrl}/metrics`)).text();
    expect(
      Number(/^gatehouse_operator_reconcile_total\{result="error"\} (\d+)$/m.exec(metrics)?.[1]),
    ).toBeGreaterThan(0);
    expect(failed.status?.observedGeneration).toBe(1);
  }, 60_000);

  it('an empty EndpointSlice list is no acknowledgement: the standby hears "auto" once its pods are listed', async () => {
    const NS = 'slices';
    const slice = (role: 'bypass' | 'fallback', p: number) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `s-eu-${role}-x`,
        namespace: NS,
        labels: { 'kubernetes.io/service-name': `s-eu-${role}` },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: p, protocol: 'TCP' }],
      endpoints: [{ addresses: [FAKE[role]], conditions: { ready: true } }],
    });
    const writeSlices = async () => {
      await admin.create(resourcePath(ENDPOINT_SLICES, NS), slice('bypass', port(standby.urls.bypass)));
      await admin.create(resourcePath(ENDPOINT_SLICES, NS), slice('fallback', port(standby.urls.fallback)));
    };
    await writeSlices();
    await applyApp(admin, NS, 's', appSpec({ regions: [region('eu', { probeUrl: api.url })] }));
    await registered(NS, 's');
    await api.pause();
    try {
      await eventually('the standby told to serve', async () => standby.health.status().mode === 'serve');
      // The pods' slices vanish (a slice controller rewriting them, pods being replaced) while the main API returns.
      await admin.delete(resourcePath(ENDPOINT_SLICES, NS, 's-eu-bypass-x'));
      await admin.delete(resourcePath(ENDPOINT_SLICES, NS, 's-eu-fallback-x'));
    } finally {
      await api.resume();
    }
    await eventually(
      'the main API judged healthy',
      async () => (await getApp(admin, NS, 's'))?.status?.regions?.[0]?.mainHealthy === true,
    );
    await sleep(1000);
    const meanwhile = (await getApp(admin, NS, 's')) as App;
    // Nobody heard "auto": the status must not claim the main API serves, and the standby still serves.
    expect(meanwhile.status?.regions?.[0]?.serving).toBe('standby');
    expect(standby.health.status().mode).toBe('serve');
    await writeSlices();
    await eventually('the standby back to auto', async () => standby.health.status().mode === 'auto', 15_000);
    await eventually(
      'status serving=main',
      async () => (await getApp(admin, NS, 's'))?.status?.regions?.[0]?.serving === 'main',
    );
  }, 60_000);

  it('riskPolicy is compared as JSON, not as text: an unchanged App gets no PATCH and no SettingsUpdated event', async () => {
    const NS = 'drift';
    // Registration is confirmed again every resync: make that 1 s, and let a few pass.
    await start({ resyncMs: 1000 });
    await applyApp(
      admin,
      NS,
      'd',
      appSpec({
        regions: [region('eu')],
        // PostgreSQL's jsonb gives keys back shortest first: high, velocity, invisible_below.
        riskPolicy: { invisible_below: 30, high: 'hard', velocity: { app: 5000 } },
      }),
    );
    await registered(NS, 'd');
    // What is judged is the resyncs that follow registration, once the registering reconciles are done:
    // the count of PATCHes has to hold still for a second first (at most a few).
    let patches = proxy.count('PATCH /admin/v1/apps/:key');
    for (let i = 0; i < 5; i++) {
      await sleep(1000);
      const now = proxy.count('PATCH /admin/v1/apps/:key');
      if (now === patches) break;
      patches = now;
    }
    const gets = proxy.count('GET /admin/v1/apps/:key');
    await sleep(4000);
    expect(proxy.count('GET /admin/v1/apps/:key'), 'the resyncs re-checked the app').toBeGreaterThan(gets);
    expect(proxy.count('PATCH /admin/v1/apps/:key') - patches).toBe(0);
    expect(await events(NS, 'SettingsUpdated')).toBe(0);
    await start();
  }, 60_000);

  it('deleting an App while the admin API is down: the skip-cleanup annotation lets it go', async () => {
    const NS = 'deletion';
    await applyApp(admin, NS, 'stuck', appSpec({ regions: [region('eu')] }));
    await registered(NS, 'stuck');
    await api.pause();
    try {
      await admin.delete(resourcePath(APPS, NS, 'stuck'));
      await sleep(2000);
      const terminating = await getApp(admin, NS, 'stuck');
      expect(terminating?.metadata.deletionTimestamp).toBeDefined();
      expect(terminating?.metadata.finalizers).toContain(FINALIZER);
      await admin.mergePatch(resourcePath(APPS, NS, 'stuck'), {
        metadata: { annotations: { [SKIP_CLEANUP_ANNOTATION]: 'true' } },
      });
      const annotatedAt = Date.now();
      await eventually('the App gone', async () => (await getApp(admin, NS, 'stuck')) === null, 10_000);
      console.log(`annotated App deleted ${Date.now() - annotatedAt} ms after the annotation`);
      expect(await events(NS, 'CleanupSkipped')).toBe(1);
    } finally {
      await api.resume();
    }
  }, 60_000);

  it('deleting an App while the admin API is down: after the cleanup timeout it goes anyway', async () => {
    const NS = 'deletion';
    await start({ cleanupTimeoutMs: 2000 });
    await applyApp(admin, NS, 'slow', appSpec({ regions: [region('us')] }));
    await registered(NS, 'slow');
    await api.pause();
    try {
      const deletedAt = Date.now();
      await admin.delete(resourcePath(APPS, NS, 'slow'));
      await eventually('the App gone', async () => (await getApp(admin, NS, 'slow')) === null, 20_000);
      const took = Date.now() - deletedAt;
      console.log(`App deleted ${took} ms after the request with the admin API down (timeout 2 s)`);
      expect(took).toBeGreaterThanOrEqual(1500);
      expect(await events(NS, 'CleanupSkipped')).toBe(2);
    } finally {
      await api.resume();
      await start();
    }
  }, 60_000);

  it('an App annotated skip-cleanup (what the chart declares) never gets the finalizer: it deletes without an operator', async () => {
    const NS = 'deletion';
    await admin.apply(
      resourcePath(APPS, NS, 'declared'),
      {
        apiVersion: 'gatehouse.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'declared', namespace: NS, annotations: { [SKIP_CLEANUP_ANNOTATION]: 'true' } },
        spec: appSpec({ regions: [region('eu')] }),
      },
      'helm',
    );
    await registered(NS, 'declared');
    expect((await getApp(admin, NS, 'declared'))?.metadata.finalizers ?? []).not.toContain(FINALIZER);
    expect(namesOf(await list(DEPLOYMENTS, NS))).toContain('declared-eu-api');
    await manager?.stop();
    manager = undefined;
    await admin.delete(resourcePath(APPS, NS, 'declared'));
    await eventually(
      'the App gone with no operator running',
      async () => !(await getApp(admin, NS, 'declared')),
      5000,
    );
    await start();
  });

  it("a Deployment an HPA scales keeps the autoscaler's replica count across reconciles", async () => {
    const NS = 'hpa';
    await applyApp(admin, NS, 'h', appSpec({ regions: [region('eu', { replicas: 2 })] }));
    await registered(NS, 'h');
    await admin.create(`/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h-eu-api', namespace: NS },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'h-eu-api' },
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
          },
        ],
      },
    });
    // What the autoscaler does: write the scale subresource (there is no metrics server here to make it decide).
    await admin.mergePatch(
      `${resourcePath(DEPLOYMENTS, NS, 'h-eu-api')}/scale`,
      { spec: { replicas: 5 } },
      'horizontal-pod-autoscaler',
    );
    // A spec change makes the operator apply every object again.
    await applyApp(admin, NS, 'h', appSpec({ plan: 'enterprise', regions: [region('eu', { replicas: 2 })] }));
    await eventually(
      'generation 2 carried out',
      async () => (await getApp(admin, NS, 'h'))?.status?.observedGeneration === 2,
    );
    await sleep(500);
    const d = await admin.get<Obj>(resourcePath(DEPLOYMENTS, NS, 'h-eu-api'));
    expect(d.spec?.replicas).toBe(5);
    // Deployments without an HPA still follow the spec.
    expect((await admin.get<Obj>(resourcePath(DEPLOYMENTS, NS, 'h-eu-bypass'))).spec?.replicas).toBe(2);
  }, 60_000);

  it('CRD upgrade path: the leader upgrades an older App CRD, and leaves a newer one alone', async () => {
    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.gatehouse.dev';
    const field =
      '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/regions/items/properties/standbyStoreSecretRef';
    type Crd = {
      metadata: { annotations?: Record<string, string> };
      spec: { versions: { schema: unknown }[] };
    };
    const hasField = async () =>
      JSON.stringify((await admin.get<Crd>(crdPath)).spec.versions[0]?.schema).includes(
        'standbyStoreSecretRef',
      );
    // What an installation from an older chart looks like: a field missing, an older version recorded.
    const downgrade = (version: string) =>
      cp.call(
        'PATCH',
        crdPath,
        [
          { op: 'remove', path: field },
          { op: 'add', path: '/metadata/annotations', value: { [CRD_VERSION_ANNOTATION]: version } },
        ],
        'application/json-patch+json',
      );
    expect((await downgrade('0.0.1')).status).toBe(200);
    expect(await hasField()).toBe(false);
    await start({ manageCrd: true });
    await eventually('the CRD upgraded by the leader', async () => hasField(), 15_000);
    expect((await admin.get<Crd>(crdPath)).metadata.annotations?.[CRD_VERSION_ANNOTATION]).toBe(
      OPERATOR_VERSION,
    );
    // A newer operator's CRD (a rolling upgrade, this replica the old one): never rolled back.
    expect((await downgrade('99.0.0')).status).toBe(200);
    await start({ manageCrd: true });
    await eventually('a leader', async () => manager?.isLeader);
    await sleep(1000);
    expect(await hasField()).toBe(false);
    await admin.apply(crdPath, appCrd(), 'gatehouse-tests');
    await start();
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { makeApp, region } from '../../../test/fixtures.ts';
import { buildDeployment } from './deployment.ts';
import { desiredObjects } from './index.ts';
import { buildIngress } from './network.ts';

const defaults = {
  images: { api: 'gh/api:1', standby: 'gh/standby:1' },
  runtimeSecret: 'gatehouse-runtime',
  trustedProxies: 'private',
  operatorNamespace: 'gatehouse-system',
};
type Dep = ReturnType<typeof buildDeployment>;
const envOf = (d: Dep) =>
  Object.fromEntries(
    d.spec.template.spec.containers[0]?.env.map((e) => [e.name, e.value ?? e.valueFrom]) ?? [],
  );

describe('desired objects', () => {
  const app = makeApp();
  const objects = desiredObjects(app, defaults);

  it('per region: three Deployments, Services and PDBs (api, bypass, fallback) and one Ingress, all owned by the App', () => {
    const names = objects.map((o) => `${o.object.kind}/${o.object.metadata.name}`);
    expect(names.filter((n) => n.startsWith('Deployment/'))).toEqual([
      'Deployment/shop-eu-api',
      'Deployment/shop-eu-bypass',
      'Deployment/shop-eu-fallback',
      'Deployment/shop-us-api',
      'Deployment/shop-us-bypass',
      'Deployment/shop-us-fallback',
    ]);
    expect(names.filter((n) => n.startsWith('Service/'))).toHaveLength(6);
    expect(names.filter((n) => n.startsWith('PodDisruptionBudget/'))).toHaveLength(6);
    expect(names.filter((n) => n.startsWith('Ingress/'))).toEqual(['Ingress/shop-eu', 'Ingress/shop-us']);
    for (const { object } of objects) {
      expect(object.metadata).toMatchObject({
        namespace: 'shop',
        labels: { 'app.kubernetes.io/managed-by': 'gatehouse-operator', 'gatehouse.dev/app': 'shop' },
        ownerReferences: [
          {
            apiVersion: 'gatehouse.dev/v1alpha1',
            kind: 'App',
            name: 'shop',
            uid: app.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      });
    }
  });

  it('the API: replicas, image, probes, region settings, the runtime Secret, standby URLs for discovery', () => {
    const api = buildDeployment(
      app,
      region('eu', { locality: 'europe-west1', replicas: 3 }),
      'api',
      defaults,
    );
    const c = api.spec.template.spec.containers[0];
    expect(api.spec.replicas).toBe(3);
    expect(c?.image).toBe('gh/api:1');
    expect(c?.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c?.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c?.envFrom).toEqual([{ secretRef: { name: 'gatehouse-runtime' } }]);
    expect(envOf(api)).toMatchObject({
      PORT: '8080',
      GATEHOUSE_DB_REGION: 'europe-west1',
      STANDBY_BYPASS_URLS: 'https://bypass.a.eu.shop.example,https://bypass.b.eu.shop.example',
      STANDBY_FALLBACK_URLS:
        'https://fallbackapiv1.a.eu.shop.example,https://fallbackapiv1.b.eu.shop.example',
      SHUTDOWN_DRAIN_MS: '2000',
    });
  });

  it("the API's database region: GATEHOUSE_DB_REGION is the locality (default the region name), DATABASE_URL the region's own", () => {
    const plain = envOf(buildDeployment(app, region('us'), 'api', defaults));
    expect(plain.GATEHOUSE_DB_REGION).toBe('us');
    expect(plain.DATABASE_URL).toBeUndefined();
    const own = buildDeployment(
      app,
      region('eu', { locality: 'europe-west1', databaseSecretRef: { name: 'db-eu', key: 'url' } }),
      'api',
      defaults,
    );
    expect(envOf(own)).toMatchObject({
      GATEHOUSE_DB_REGION: 'europe-west1',
      DATABASE_URL: { secretKeyRef: { name: 'db-eu', key: 'url' } },
    });
    // Standby pods never touch the database: no region, no URL.
    const standby = envOf(
      buildDeployment(app, region('eu', { locality: 'europe-west1' }), 'bypass', defaults),
    );
    expect(standby.GATEHOUSE_DB_REGION).toBeUndefined();
    expect(standby.DATABASE_URL).toBeUndefined();
  });

  it('standby pods: their role, the main API URL, the sync token, and no database access', () => {
    const r = region('eu', { databaseSecretRef: { name: 'crdb-eu', key: 'url' }, standby: { replicas: 4 } });
    const bypass = buildDeployment(app, r, 'bypass', defaults);
    const fallback = buildDeployment(app, r, 'fallback', defaults);
    expect(bypass.spec.replicas).toBe(4);
    expect(envOf(bypass)).toMatchObject({
      STANDBY_ROLE: 'bypass',
      MAIN_API_URL: 'http://shop-eu-api.shop.svc:9090',
      // The widget files it serves too come from the API's public port.
      STANDBY_WIDGET_SOURCE_URL: 'http://shop-eu-api.shop.svc',
      STANDBY_INTERNAL_PORT: '9091',
      STANDBY_BYPASS_PORT: '8081',
    });
    expect(envOf(fallback)).toMatchObject({
      STANDBY_ROLE: 'fallback',
      STANDBY_SYNC_TOKEN: {
        secretKeyRef: { name: 'gatehouse-runtime', key: 'STANDBY_SYNC_TOKEN', optional: true },
      },
    });
    for (const d of [bypass, fallback]) {
      expect(envOf(d)).not.toHaveProperty('DATABASE_URL');
      expect(d.spec.template.spec.containers[0]).not.toHaveProperty('envFrom');
      expect(d.spec.template.spec.containers[0]?.image).toBe('gh/standby:1');
    }
    const own = region('eu', { standbyStoreSecretRef: { name: 'redis-eu', key: 'url' } });
    expect(envOf(buildDeployment(app, own, 'fallback', defaults)).STANDBY_STORE_URL).toEqual({
      secretKeyRef: { name: 'redis-eu', key: 'url' },
    });
    // The region's API consumes offline_ tokens in the same store as its standby.
    expect(envOf(buildDeployment(app, own, 'api', defaults)).STANDBY_STORE_URL).toEqual({
      secretKeyRef: { name: 'redis-eu', key: 'url' },
    });
    expect(envOf(buildDeployment(app, region('eu'), 'api', defaults))).not.toHaveProperty(
      'STANDBY_STORE_URL',
    );
    expect(envOf(buildDeployment(app, r, 'api', defaults)).DATABASE_URL).toEqual({
      secretKeyRef: { name: 'crdb-eu', key: 'url' },
    });
  });

  it('every pod trusts only the proxies it is told (the Ingress controller by default), never TRUST_PROXY', () => {
    for (const role of ['api', 'bypass', 'fallback'] as const) {
      const env = envOf(buildDeployment(app, region('eu'), role, defaults));
      expect(env.TRUSTED_PROXIES).toBe('private');
      expect(env).not.toHaveProperty('TRUST_PROXY');
      const behindCdn = makeApp({ trustedProxies: '2' });
      expect(envOf(buildDeployment(behindCdn, region('eu'), role, defaults)).TRUSTED_PROXIES).toBe('2');
    }
    const operatorWide = { ...defaults, trustedProxies: '10.0.0.0/8, 192.0.2.7' };
    expect(envOf(buildDeployment(app, region('eu'), 'api', operatorWide)).TRUSTED_PROXIES).toBe(
      '10.0.0.0/8, 192.0.2.7',
    );
  });

  it('hardened pods: non-root, read-only root filesystem, no capabilities, no service account token', () => {
    const d = buildDeployment(app, region('eu'), 'fallback', defaults);
    const pod = d.spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers[0]?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('changing images or replicas never changes a selector (Deployment selectors are immutable)', () => {
    const before = buildDeployment(app, region('eu'), 'api', defaults);
    const changed = makeApp({ images: { api: 'gh/api:2' } });
    const after = buildDeployment(changed, region('eu', { replicas: 5 }), 'api', defaults);
    expect(after.spec.selector).toEqual(before.spec.selector);
    expect(after.spec.template.spec.containers[0]?.image).toBe('gh/api:2');
    for (const [k, v] of Object.entries(before.spec.selector.matchLabels)) {
      expect(after.spec.template.metadata.labels[k]).toBe(v);
    }
  });

  it('routes every host of a region: API host to the API, both bypass and both fallback hosts to their role', () => {
    const ing = buildIngress(
      makeApp({ ingressClassName: 'nginx' }),
      region('eu', { tlsSecretName: 'eu-tls' }),
    );
    const routes = ing.spec.rules.map((r) => `${r.host} -> ${r.http.paths[0]?.backend.service.name}`);
    expect(routes).toEqual([
      'api.eu.shop.example -> shop-eu-api',
      'bypass.a.eu.shop.example -> shop-eu-bypass',
      'bypass.b.eu.shop.example -> shop-eu-bypass',
      'fallbackapiv1.a.eu.shop.example -> shop-eu-fallback',
      'fallbackapiv1.b.eu.shop.example -> shop-eu-fallback',
    ]);
    expect(ing.spec.ingressClassName).toBe('nginx');
    expect(ing.spec.tls?.[0]?.hosts).toHaveLength(5);
  });

  it('internal endpoints: a named internal port on pods and Services that the Ingress never routes', () => {
    const r = region('eu');
    const api = buildDeployment(app, r, 'api', defaults);
    expect(envOf(api)).toMatchObject({ PORT: '8080', INTERNAL_PORT: '9090' });
    expect(api.spec.template.spec.containers[0]?.ports.map((p) => p.name)).toEqual(['http', 'internal']);
    const services = objects.filter((o) => o.object.kind === 'Service');
    for (const { object } of services)
      expect((object.spec as { ports: { name: string }[] }).ports.map((p) => p.name)).toEqual([
        'http',
        'internal',
      ]);
    const ing = buildIngress(app, r);
    expect(new Set(ing.spec.rules.map((x) => x.http.paths[0]?.backend.service.port.name))).toEqual(
      new Set(['http']),
    );
  });

  it('NetworkPolicies: the internal ports open only to the standby (API) and the operator namespace (standby)', () => {
    const policies = objects.filter((o) => o.object.kind === 'NetworkPolicy').map((o) => o.object);
    expect(policies.map((p) => p.metadata.name)).toEqual([
      'shop-eu-api',
      'shop-eu-standby',
      'shop-us-api',
      'shop-us-standby',
    ]);
    type Policy = { spec: { ingress: { from?: unknown[]; ports: { port: string }[] }[] } };
    const [api, standby] = policies as unknown as Policy[];
    expect(api?.spec.ingress[0]).toEqual({ ports: [{ port: 'http', protocol: 'TCP' }] });
    expect(api?.spec.ingress[1]?.ports).toEqual([{ port: 'internal', protocol: 'TCP' }]);
    expect(JSON.stringify(api?.spec.ingress[1]?.from)).toContain('"values":["bypass","fallback"]');
    expect(standby?.spec.ingress[1]?.from).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gatehouse-system' } } },
    ]);
  });

  it('placement: replicas spread over zones then nodes; the region is preferred by its topology label', () => {
    const d = buildDeployment(app, region('eu', { locality: 'europe-west1' }), 'api', defaults);
    const pod = d.spec.template.spec;
    expect(pod.topologySpreadConstraints.map((c) => c.topologyKey)).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/hostname',
    ]);
    expect(
      pod.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]?.preference
        .matchExpressions,
    ).toEqual([{ key: 'topology.kubernetes.io/region', operator: 'In', values: ['europe-west1'] }]);
  });
});

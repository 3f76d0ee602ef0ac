/**
 * The kustomize manifests (k8s/base, k8s/overlays/two-region, k8s/samples): built with kustomize, checked
 * for what the overlay must change, built on operator/config (no copies of its objects), then validated
 * against a real kube-apiserver: kubeconform -strict with its schemas, offline, and a server-side
 * dry-run of every object after the CRD and the namespace were created for real.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ControlPlane, controlPlaneAvailable } from '@gatehouse/operator/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API_FILE, MANAGER_FILE } from '../../charts/scripts/sync-operator.ts';
import {
  applyDryRun,
  type KubeObject,
  kubeconform,
  parseObjects,
  startSchemaCluster,
} from '../../charts/test/lib/kube.ts';
import { missingTools, REPO, run } from '../../charts/test/lib/tools.ts';

const SUITE = 'k8s/test/manifests.test.ts';
const noKustomize = missingTools(`${SUITE} (kustomize)`, ['kustomize']).length > 0;
const noCluster = [
  missingTools(`${SUITE} (cluster)`, ['kustomize', 'kubeconform']).length > 0,
  !controlPlaneAvailable({ controllers: false, suite: `${SUITE} (cluster)` }),
].some(Boolean);

const TARGETS = ['base', 'overlays/two-region', 'samples'] as const;

async function build(target: string): Promise<{ yaml: string; objects: KubeObject[] }> {
  const r = await run('kustomize', ['build', join(REPO, 'k8s', target)]);
  if (r.code !== 0) throw new Error(`kustomize build k8s/${target} failed:\n${r.stderr}`);
  return { yaml: r.stdout, objects: parseObjects(r.stdout) };
}

const find = (objects: KubeObject[], kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name}`);
  return o;
};

type Container = {
  name: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  [k: string]: unknown;
};
const container = (o: KubeObject) =>
  (o.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;
const envOf = (o: KubeObject) =>
  Object.fromEntries((container(o).env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

describe.skipIf(noKustomize)('kustomize build', () => {
  const built: Record<string, { yaml: string; objects: KubeObject[] }> = {};
  beforeAll(async () => {
    for (const t of TARGETS) built[t] = await build(t);
  }, 120_000);

  it('builds the base: namespace, CRD, RBAC, operator with leader election, admin API', () => {
    const { objects } = built.base!;
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      [
        'ClusterRole/gatehouse-operator',
        'ClusterRoleBinding/gatehouse-operator',
        'ClusterRole/gatehouse-operator-secrets',
        // /metrics' token check, and the role a scraper is bound to.
        'ClusterRole/gatehouse-operator-metrics-auth',
        'ClusterRoleBinding/gatehouse-operator-metrics-auth',
        'ClusterRole/gatehouse-operator-metrics-reader',
        'CustomResourceDefinition/apps.gatehouse.dev',
        'Deployment/gatehouse-admin-api',
        'Deployment/gatehouse-operator',
        'Namespace/gatehouse-system',
        'PodDisruptionBudget/gatehouse-operator',
        'Role/gatehouse-operator-leader-election',
        'RoleBinding/gatehouse-operator-leader-election',
        // Secrets only in the namespace whose Apps it manages, and the operator told so.
        'RoleBinding/gatehouse-operator-secrets',
        'Service/gatehouse-admin-api',
        'Service/gatehouse-operator-metrics',
        'ServiceAccount/gatehouse-operator',
      ].sort(),
    );
    const operator = find(objects, 'Deployment', 'gatehouse-operator');
    expect((operator.spec as { replicas: number }).replicas).toBe(2);
    expect(envOf(operator)).toMatchObject({
      LEADER_ELECT: 'true',
      LEADER_ELECTION_ID: 'gatehouse-operator',
      GATEHOUSE_SECRET_NAMESPACES: 'gatehouse-system',
      GATEHOUSE_TRUSTED_PROXIES: 'private',
    });
    const secretRules = find(objects, 'ClusterRole', 'gatehouse-operator-secrets') as KubeObject & {
      rules: { resources: string[] }[];
    };
    expect(secretRules.rules.flatMap((r) => r.resources)).toEqual(['secrets']);
    const broad = find(objects, 'ClusterRole', 'gatehouse-operator') as KubeObject & {
      rules: { resources: string[] }[];
    };
    expect(broad.rules.flatMap((r) => r.resources)).not.toContain('secrets');
    for (const o of objects)
      if (
        o.kind !== 'Namespace' &&
        o.kind !== 'ClusterRole' &&
        o.kind !== 'ClusterRoleBinding' &&
        o.kind !== 'CustomResourceDefinition'
      )
        expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe('gatehouse-system');
  });

  it('patches the two-region overlay: admin API in the primary region, sample Apps in two regions', () => {
    const { objects } = built['overlays/two-region']!;
    const admin = find(objects, 'Deployment', 'gatehouse-admin-api');
    const spec = (admin.spec as { template: { spec: { nodeSelector: Record<string, string> } } }).template
      .spec;
    expect(spec.nodeSelector).toEqual({ 'topology.kubernetes.io/region': 'europe-west1' });
    const env = envOf(admin);
    expect(env).toMatchObject({
      HOST: '0.0.0.0',
      GATEHOUSE_REGION: 'eu-west',
      GATEHOUSE_DB_REGION: 'europe-west1',
    });
    expect(env.DATABASE_URL).toEqual({ secretKeyRef: { name: 'gatehouse-db-eu-west', key: 'DATABASE_URL' } });
    const operator = find(objects, 'Deployment', 'gatehouse-operator');
    expect(envOf(operator)).toMatchObject({ LEADER_ELECT: 'true' });
    // The shipped probe cadence, which the switch's goals are measured with: the overlay does not change it.
    const probes = (o: KubeObject) => Object.entries(envOf(o)).filter(([k]) => k.startsWith('PROBE_'));
    expect(probes(operator)).toEqual(probes(find(built.base!.objects, 'Deployment', 'gatehouse-operator')));
    expect(envOf(operator).PROBE_INTERVAL_MS).toBe('500');
    const shop = find(objects, 'App', 'shop') as KubeObject & {
      spec: { regions: { name: string; locality: string }[] };
    };
    expect(shop.metadata.namespace).toBe('gatehouse-system');
    expect(shop.spec.regions.map((r) => [r.name, r.locality])).toEqual([
      ['eu-west', 'europe-west1'],
      ['us-east', 'us-east1'],
    ]);
    expect(objects.filter((o) => o.kind === 'App')).toHaveLength(2);
    for (const o of objects)
      expect(o.metadata.labels?.['gatehouse.dev/topology'], `${o.kind} ${o.metadata.name}`).toBe(
        'two-region',
      );
  });

  it('takes the operator from operator/config/default (no copy here); both Deployments are rendered from the chart', () => {
    const own = readdirSync(join(REPO, 'k8s/base'), { recursive: true, encoding: 'utf8' }).filter((f) =>
      /\.ya?ml$/.test(f),
    );
    const kept = own.flatMap((f) =>
      parseObjects(readFileSync(join(REPO, 'k8s/base', f), 'utf8'))
        .filter(
          (o) => o.kind === 'Deployment' || o.kind === 'CustomResourceDefinition' || /Role/.test(o.kind),
        )
        .map((o) => `${f}: ${o.kind}/${o.metadata.name}`),
    );
    // The admin API's Deployment is in k8s/base, but generated from the chart like the operator's.
    expect(kept).toEqual(['admin-api/deployment.yaml: Deployment/gatehouse-admin-api']);
    for (const [file, name] of [
      [MANAGER_FILE, 'gatehouse-operator'],
      [ADMIN_API_FILE, 'gatehouse-admin-api'],
    ] as const) {
      const text = readFileSync(join(REPO, file), 'utf8');
      expect(text).toMatch(/^# Code generated by .* DO NOT EDIT\./);
      const source = parseObjects(text)[0]!;
      expect(find(built.base!.objects, 'Deployment', name).spec).toEqual(source.spec);
    }
  });
});

describe.skipIf(noCluster)('against a real kube-apiserver', () => {
  let cp: ControlPlane;
  let schemas: string;
  const built: Record<string, { yaml: string; objects: KubeObject[] }> = {};

  beforeAll(async () => {
    for (const t of TARGETS) built[t] = await build(t);
    ({ cp, schemas } = await startSchemaCluster(built.base!.objects));
  }, 300_000);

  afterAll(async () => {
    await cp?.stop();
  }, 60_000);

  it.each(TARGETS)(
    'validates k8s/%s with kubeconform -strict, offline, against the apiserver schemas',
    { timeout: 120_000 },
    async (t) => {
      const report = await kubeconform(schemas, built[t]!.yaml);
      expect(report.invalid, report.output.slice(0, 2000)).toEqual([]);
      expect(report.code).toBe(0);
      expect(report.valid).toBe(built[t]!.objects.length);
    },
  );

  it('has kubeconform reject a misspelt field and a wrong type (the schemas are strict), and an App outside its schema', {
    timeout: 60_000,
  }, async () => {
    type Broken = KubeObject & {
      spec: { replicas: unknown; template: { spec: { containers: Record<string, unknown>[] } } };
    };
    const operator = structuredClone(find(built.base!.objects, 'Deployment', 'gatehouse-operator')) as Broken;
    operator.spec.template.spec.containers[0]!.imagePullPolcy = 'Always';
    operator.spec.replicas = 'two';
    const app = structuredClone(find(built.samples!.objects, 'App', 'shop')) as KubeObject & {
      spec: Record<string, unknown>;
    };
    app.spec.plan = 'platinum';
    const report = await kubeconform(schemas, [operator, app].map((o) => JSON.stringify(o)).join('\n---\n'));
    expect(report.code).not.toBe(0);
    expect(report.invalid.join('\n')).toMatch(
      /Deployment gatehouse-operator: statusInvalid .*imagePullPolcy/,
    );
    expect(report.invalid.join('\n')).toMatch(/Deployment gatehouse-operator: statusInvalid .*replicas/);
    expect(report.invalid.join('\n')).toMatch(
      /App shop: statusInvalid .*platinum|App shop: statusInvalid .*plan/,
    );
  });

  it.each(TARGETS)('dry-runs every object of k8s/%s on the apiserver', { timeout: 180_000 }, async (t) => {
    const { failures, checked } = await applyDryRun(cp, built[t]!.objects, 'gatehouse-system');
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});

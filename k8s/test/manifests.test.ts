/**
 * The kustomize manifests (k8s/base, k8s/overlays/two-region, k8s/samples): built with kustomize, checked
 * for what the overlay must change, kept in step with the chart's operator Deployment, then validated
 * against a real kube-apiserver: kubeconform -strict with its schemas, offline, and a server-side
 * dry-run of every object after the CRD and the namespace were created for real.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyDryRun,
  type KubeObject,
  kubeconform,
  parseObjects,
  startSchemaCluster,
} from '../../charts/test/lib/kube.ts';
import { CHART, missingTools, REPO, run } from '../../charts/test/lib/tools.ts';
import { type ControlPlane, controlPlaneAvailable } from '../../operator/test/control-plane.ts';

const SUITE = 'k8s/test/manifests.test.ts';
const noKustomize = missingTools(`${SUITE} (kustomize)`, ['kustomize']).length > 0;
const noHelm = missingTools(`${SUITE} (helm, to compare with the chart)`, ['helm']).length > 0;
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
        'CustomResourceDefinition/apps.gatehouse.dev',
        'Deployment/gatehouse-admin-api',
        'Deployment/gatehouse-operator',
        'Namespace/gatehouse-system',
        'PodDisruptionBudget/gatehouse-operator',
        'Role/gatehouse-operator-leader-election',
        'RoleBinding/gatehouse-operator-leader-election',
        'Service/gatehouse-admin-api',
        'Service/gatehouse-operator-metrics',
        'ServiceAccount/gatehouse-operator',
      ].sort(),
    );
    const operator = find(objects, 'Deployment', 'gatehouse-operator');
    expect((operator.spec as { replicas: number }).replicas).toBe(2);
    expect(envOf(operator)).toMatchObject({ LEADER_ELECT: 'true', LEADER_ELECTION_ID: 'gatehouse-operator' });
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
    expect(envOf(operator)).toMatchObject({ PROBE_INTERVAL_MS: '1000', LEADER_ELECT: 'true' });
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

  it("runs the operator's image, ports, probes and leader election as operator/config/manager does", () => {
    const theirs = parseObjects(
      readFileSync(join(REPO, 'operator/config/manager/manager.yaml'), 'utf8'),
    ).find((o) => o.kind === 'Deployment')!;
    const ours = find(built.base!.objects, 'Deployment', 'gatehouse-operator');
    const [a, b] = [container(theirs), container(ours)];
    expect(b.image).toBe(a.image);
    const ports = (c: Container) =>
      (c.ports as { name: string; containerPort: number }[]).map((p) => [p.name, p.containerPort]);
    expect(ports(b)).toEqual(ports(a));
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      expect((b[probe] as { httpGet: unknown }).httpGet, probe).toEqual(
        (a[probe] as { httpGet: unknown }).httpGet,
      );
    }
    expect((ours.spec as { replicas: number }).replicas).toBe((theirs.spec as { replicas: number }).replicas);
    expect(envOf(ours).LEADER_ELECT).toBe('true');
    expect((a.args as string[]).join(' ')).toContain('--leader-elect true');
  });

  it.skipIf(noHelm)(
    'runs the operator as the chart does (same settings, ports, probes, security)',
    { timeout: 60_000 },
    async () => {
      const r = await run('helm', [
        'template',
        'gatehouse',
        CHART,
        '--namespace',
        'gatehouse-system',
        '--kube-version',
        '1.37.1',
        '--show-only',
        'templates/deployment.operator.yaml',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const chart = container(parseObjects(r.stdout)[0]!);
      const plain = container(find(built.base!.objects, 'Deployment', 'gatehouse-operator'));
      const names = (c: Container) => (c.env ?? []).map((e) => e.name);
      expect(names(chart)).toEqual(expect.arrayContaining(names(plain)));
      for (const key of ['ports', 'livenessProbe', 'readinessProbe', 'securityContext', 'resources'])
        expect(plain[key], key).toEqual(chart[key]);
    },
  );
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

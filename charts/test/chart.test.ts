/**
 * The gatehouse Helm chart: copies in sync with the operator, every value documented, `helm lint --strict`,
 * renders with default and two-region values, each validation's readable failure, then the rendered
 * objects against a real kube-apiserver: kubeconform with its schemas, offline and strict, and a
 * server-side dry-run of every object after the CRD was created for real.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ControlPlane, controlPlaneAvailable } from '@gatehouse/operator/testing';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGIONAL_TABLES } from '../../core/src/db/region.ts';
import { renderedReadme } from '../scripts/readme.ts';
import { drift, MANAGER_FILE, plan, renderedManager } from '../scripts/sync-operator.ts';
import {
  applyDryRun,
  ensureNamespace,
  type KubeObject,
  kubeconform,
  parseObjects,
  startSchemaCluster,
} from './lib/kube.ts';
import { CHART, findTool, missingTools, REPO, run } from './lib/tools.ts';

const TWO_REGION = join(CHART, 'ci/two-region-values.yaml');
const EXTERNAL = join(CHART, 'ci/external-services-values.yaml');
/** The value sets every render check runs with: defaults, two regions, external database and Redis. */
const VARIANTS: Record<string, string[]> = {
  default: [],
  'two-region': ['-f', TWO_REGION],
  external: ['-f', EXTERNAL],
};
const KUBE_VERSION = '1.37.1';
const SUITE = 'charts/test/chart.test.ts';
const noHelm = missingTools(`${SUITE} (helm)`, ['helm']).length > 0;
const noCluster = [
  missingTools(`${SUITE} (cluster)`, ['helm', 'kubeconform']).length > 0,
  !controlPlaneAvailable({ controllers: false, suite: `${SUITE} (cluster)` }),
].some(Boolean);

const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-chart-values-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `helm template` of the chart with extra arguments (values files, --set). */
function template(args: string[], namespace = 'gatehouse-system') {
  return run('helm', [
    'template',
    'gatehouse',
    CHART,
    '--namespace',
    namespace,
    '--include-crds',
    '--kube-version',
    KUBE_VERSION,
    ...args,
  ]);
}

async function render(args: string[], namespace?: string): Promise<{ yaml: string; objects: KubeObject[] }> {
  const r = await template(args, namespace);
  if (r.code !== 0) throw new Error(`helm template ${args.join(' ')} failed:\n${r.stderr}`);
  return { yaml: r.stdout, objects: parseObjects(r.stdout) };
}

/** A values file in the scratch folder. */
function valuesFile(name: string, values: unknown) {
  const path = join(scratch, `${name}.yaml`);
  writeFileSync(path, dump(values));
  return path;
}

const find = (objects: KubeObject[], kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o)
    throw new Error(`no ${kind} ${name} in ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
};

type Container = {
  name: string;
  env?: { name: string; value?: string }[];
  command?: string[];
  resources?: { requests?: unknown; limits?: unknown };
  securityContext?: Record<string, unknown>;
};
type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: Record<string, unknown>;
};

/** The pod template of a workload (Deployment, StatefulSet, Job, CronJob). */
function podSpec(o: KubeObject): PodSpec | undefined {
  type Template = { template?: { spec?: PodSpec } };
  const spec = o.spec as (Template & { jobTemplate?: { spec?: Template } }) | undefined;
  if (o.kind === 'CronJob') return spec?.jobTemplate?.spec?.template?.spec;
  if (['Deployment', 'StatefulSet', 'Job', 'DaemonSet'].includes(o.kind)) return spec?.template?.spec;
  return undefined;
}

describe('chart sources', () => {
  it('has the CRD and RBAC copies the operator owns, unchanged (charts/scripts/sync-operator.ts)', () => {
    const stale = drift(false).map((f) => `${f.path} differs from ${f.from}`);
    expect(stale, 'run: node charts/scripts/sync-operator.ts').toEqual([]);
  });

  it('documents every value with a `## @param` line, and documents nothing that is not a value', () => {
    const text = readFileSync(join(CHART, 'values.yaml'), 'utf8');
    const documented = new Set([...text.matchAll(/^## @param (\S+)/gm)].map((m) => m[1]!));
    const leaves: string[] = [];
    const walk = (value: unknown, path: string): void => {
      if (documented.has(path)) {
        leaves.push(path);
      } else if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`);
      } else if (value && typeof value === 'object' && Object.keys(value).length) {
        for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
      } else {
        leaves.push(path);
      }
    };
    walk(load(text), '');
    expect(
      leaves.filter((l) => !documented.has(l)),
      'values without a ## @param line',
    ).toEqual([]);
    expect(
      [...documented].filter((d) => !leaves.includes(d)),
      '## @param lines naming no value',
    ).toEqual([]);
  });

  it('has the parameter tables of README.md generated from values.yaml (charts/scripts/readme.ts)', () => {
    const { current, expected } = renderedReadme();
    expect(current === expected, 'run: node charts/scripts/readme.ts').toBe(true);
  });

  it('gives every table of core/src/db/schema.ts a CockroachDB locality, REGIONAL BY ROW where the API writes crdb_region', () => {
    const schema = readFileSync(join(REPO, 'core/src/db/schema.ts'), 'utf8');
    const tables = [...schema.matchAll(/pgTable\(\s*'([a-z_]+)'/g)].map((m) => m[1]!).sort();
    const values = load(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as {
      cockroachdb: { tables: { regionalByRow: string[]; global: string[] } };
    };
    const placed = [...values.cockroachdb.tables.regionalByRow, ...values.cockroachdb.tables.global].sort();
    expect(placed).toEqual(tables);
    // Console sessions have no crdb_region column: read and written by the one admin API, few rows.
    expect(values.cockroachdb.tables.global.sort()).toEqual([
      'apps',
      'console_sessions',
      'settings',
      'standby_keys',
    ]);
    // The API writes crdb_region explicitly into exactly these tables (GATEHOUSE_DB_REGION).
    expect(values.cockroachdb.tables.regionalByRow.sort()).toEqual([...REGIONAL_TABLES].sort());
  });
});

describe.skipIf(noHelm)('helm lint and template', () => {
  it('has operator/config/manager/manager.yaml rendered from the chart operator template, up to date', {
    timeout: 60_000,
  }, () => {
    const helm = findTool('helm')!;
    const stale = drift(helm).map((f) => `${f.path} differs from ${f.from}`);
    expect(stale, 'run: npm run -w @gatehouse/operator generate').toEqual([]);
    expect(plan(helm).map((f) => f.path)).toContain(MANAGER_FILE);
    // A change to the template shows in the render: the generated file is not a copy kept by hand.
    const rendered = renderedManager(helm);
    expect(rendered).toContain('DO NOT EDIT');
    expect(rendered).not.toMatch(/helm\.sh\/chart|managed-by: Helm|checksum\/rbac/);
  });

  it('passes helm lint --strict with the default, two-region and external-services values', {
    timeout: 120_000,
  }, async () => {
    for (const extra of Object.values(VARIANTS)) {
      const r = await run('helm', ['lint', '--strict', '--kube-version', KUBE_VERSION, CHART, ...extra]);
      expect(r.code, `helm lint --strict ${extra.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('renders the defaults: CRD, operator with RBAC and leader election, one region of CockroachDB, Redis', {
    timeout: 60_000,
  }, async () => {
    const { objects } = await render([]);
    const kinds = new Set(objects.map((o) => o.kind));
    for (const k of [
      'CustomResourceDefinition',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'Deployment',
      'StatefulSet',
      'Job',
      'CronJob',
      'Secret',
      'Service',
      'PodDisruptionBudget',
      'ConfigMap',
      'NetworkPolicy',
    ]) {
      expect(kinds, k).toContain(k);
    }
    const operator = find(objects, 'Deployment', 'gatehouse-operator');
    expect((operator.spec as { replicas: number }).replicas).toBe(2);
    const env = Object.fromEntries(
      (podSpec(operator)!.containers[0]!.env ?? []).map((e) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
      LEADER_ELECT: 'true',
      LEADER_ELECTION_ID: 'gatehouse-operator',
      GATEHOUSE_RUNTIME_SECRET: 'gatehouse-runtime',
      // The pods it renders trust the Ingress controller's cluster addresses only.
      GATEHOUSE_TRUSTED_PROXIES: 'private',
    });
    expect(env).not.toHaveProperty('TRUST_PROXY');
    expect(env.GATEHOUSE_ADMIN_URL).toBe(
      'http://gatehouse-admin-api.gatehouse-system.svc.cluster.local:8080',
    );
    const crd = find(objects, 'CustomResourceDefinition', 'apps.gatehouse.dev');
    expect(crd).toEqual(
      load(readFileSync(join(REPO, 'operator/config/crd/bases/gatehouse.dev_apps.yaml'), 'utf8')),
    );
    const role = find(objects, 'ClusterRole', 'gatehouse-operator') as KubeObject & { rules: unknown };
    expect(role.rules).toEqual(
      (load(readFileSync(join(CHART, 'files/operator-rbac.yaml'), 'utf8')) as { clusterRules: unknown })
        .clusterRules,
    );
    // Secrets only where its Apps live (here the release namespace), and the operator told so.
    expect(JSON.stringify(role.rules)).not.toContain('secrets');
    expect(find(objects, 'RoleBinding', 'gatehouse-operator-secrets').metadata.namespace).toBe(
      'gatehouse-system',
    );
    expect(
      objects
        .filter((o) => o.kind === 'ClusterRoleBinding')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['gatehouse-operator', 'gatehouse-operator-metrics-auth']);
    expect(env.GATEHOUSE_SECRET_NAMESPACES).toBe('gatehouse-system');
    expect(
      objects
        .filter((o) => o.kind === 'StatefulSet')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['gatehouse-cockroachdb-eu-west', 'gatehouse-redis-eu-west']);
  });

  it('runs every container non-root, read-only, without capabilities, with resources', {
    timeout: 60_000,
  }, async () => {
    for (const args of Object.values(VARIANTS)) {
      const { objects } = await render(args);
      for (const o of objects) {
        const pod = podSpec(o);
        if (!pod) continue;
        expect(pod.securityContext, `${o.kind} ${o.metadata.name}`).toMatchObject({
          runAsNonRoot: true,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          const where = `${o.kind} ${o.metadata.name} container ${c.name}`;
          expect(c.securityContext, where).toMatchObject({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
            capabilities: { drop: ['ALL'] },
          });
          expect(c.resources?.requests, where).toBeDefined();
          expect(c.resources?.limits, where).toBeDefined();
        }
      }
    }
  });

  it('renders two regions: one StatefulSet per region with its locality, one join list, the multi-region SQL', {
    timeout: 60_000,
  }, async () => {
    const { objects } = await render(['-f', TWO_REGION]);
    const join =
      'gatehouse-cockroachdb-eu-west-0.gatehouse-cockroachdb.gatehouse-system.svc.cluster.local:26257';
    for (const [region, locality] of [
      ['eu-west', 'europe-west1'],
      ['us-east', 'us-east1'],
    ]) {
      const sts = find(objects, 'StatefulSet', `gatehouse-cockroachdb-${region}`);
      const start = podSpec(sts)!.containers[0]!.command!.join(' ');
      expect(start).toContain(`--locality=region=${locality},cloud=gce`);
      expect(start).toContain(`--join=${join},`);
      expect(start).toContain('gatehouse-cockroachdb-us-east-2.gatehouse-cockroachdb');
      expect(start).toContain('--certs-dir=/cockroach/cockroach-certs');
      expect((sts.spec as { replicas: number }).replicas).toBe(3);
      const db = find(objects, 'Secret', `gatehouse-db-${region}`) as KubeObject & {
        data: { DATABASE_URL: string };
      };
      expect(Buffer.from(db.data.DATABASE_URL, 'base64').toString()).toMatch(
        new RegExp(
          `^postgresql://gatehouse:[A-Za-z0-9]{40}@gatehouse-cockroachdb-${region}-public\\.gatehouse-system\\.svc\\.cluster\\.local:26257/gatehouse\\?sslmode=require$`,
        ),
      );
    }
    const scripts = find(objects, 'ConfigMap', 'gatehouse-cockroachdb-scripts') as KubeObject & {
      data: Record<string, string>;
    };
    expect(scripts.data['init.sh']).toContain(
      'ALTER DATABASE $DATABASE SET PRIMARY REGION \\"europe-west1\\"',
    );
    expect(scripts.data['init.sh']).toContain(
      'ALTER DATABASE $DATABASE ADD REGION IF NOT EXISTS \\"us-east1\\"',
    );
    expect(scripts.data['init.sh']).toContain('SURVIVE ZONE FAILURE');
    for (const t of ['pass_tokens', 'server_tokens', 'app_usage', 'challenge_attempts']) {
      expect(scripts.data['localities.sh']).toContain(`[${t}]="REGIONAL BY ROW"`);
    }
    for (const t of ['apps', 'settings', 'standby_keys'])
      expect(scripts.data['localities.sh']).toContain(`[${t}]="GLOBAL"`);
    const init = find(objects, 'Job', 'gatehouse-cockroachdb-init-r1');
    expect(
      init.metadata.annotations?.['helm.sh/hook'],
      'not a hook: helm install --wait must not deadlock',
    ).toBeUndefined();
    const app = find(objects, 'App', 'shop') as KubeObject & {
      spec: { runtimeSecretRef: unknown; regions: Record<string, unknown>[] };
    };
    expect(app.spec.runtimeSecretRef).toEqual({ name: 'gatehouse-runtime' });
    expect(app.spec.regions[1]).toMatchObject({
      name: 'us-east',
      locality: 'us-east1',
      nodeSelector: { 'topology.kubernetes.io/region': 'us-east1' },
      databaseSecretRef: { name: 'gatehouse-db-us-east', key: 'DATABASE_URL' },
      standbyStoreSecretRef: { name: 'gatehouse-store-us-east', key: 'STANDBY_STORE_URL' },
    });
    // helm uninstall must not wait on the operator it removes (docs/operator.md, deletion).
    expect(app.metadata.annotations?.['gatehouse.dev/skip-cleanup']).toBe('true');
    const runtime = find(objects, 'Secret', 'gatehouse-runtime') as KubeObject & {
      data: Record<string, string>;
    };
    expect(Object.keys(runtime.data).sort()).toEqual([
      'DATABASE_URL',
      'REDIS_URL',
      'STANDBY_STORE_URL',
      'STANDBY_SYNC_TOKEN',
    ]);
    expect(Buffer.from(runtime.data.DATABASE_URL!, 'base64').toString()).toContain(
      '@gatehouse-cockroachdb-eu-west-public.',
    );
  });

  it('renders external services: their URLs, no CockroachDB or Redis, RBAC bound in the watched namespace only', {
    timeout: 60_000,
  }, async () => {
    const { objects } = await render(['-f', EXTERNAL]);
    expect(objects.filter((o) => o.kind === 'StatefulSet')).toEqual([]);
    const decode = (name: string, key: string) =>
      Buffer.from(
        (find(objects, 'Secret', name) as KubeObject & { data: Record<string, string> }).data[key]!,
        'base64',
      ).toString();
    expect(decode('gatehouse-db-us-east', 'DATABASE_URL')).toContain('@crdb-us.example.internal:26257');
    expect(decode('gatehouse-db-eu-west', 'DATABASE_URL')).toContain('@crdb.example.internal:26257');
    expect(decode('gatehouse-runtime', 'STANDBY_STORE_URL')).toBe(
      'rediss://:store-password@redis.example.internal:6380/0',
    );
    // The one cluster-wide binding left: /metrics' token check (TokenReview is cluster-scoped).
    expect(objects.filter((o) => o.kind === 'ClusterRoleBinding').map((o) => o.metadata.name)).toEqual([
      'gatehouse-operator-metrics-auth',
    ]);
    expect(find(objects, 'RoleBinding', 'gatehouse-operator').metadata.namespace).toBe('captcha-apps');
    expect(find(objects, 'RoleBinding', 'gatehouse-operator-secrets').metadata.namespace).toBe(
      'captcha-apps',
    );
    expect(podSpec(find(objects, 'Deployment', 'gatehouse-operator'))!.containers[0]!.env).toContainEqual({
      name: 'GATEHOUSE_SECRET_NAMESPACES',
      value: 'captcha-apps',
    });
    const operator = find(objects, 'Deployment', 'gatehouse-operator');
    expect(podSpec(operator)!.containers[0]!.env).toContainEqual({
      name: 'WATCH_NAMESPACE',
      value: 'captcha-apps',
    });
    expect(podSpec(operator)!.containers[0]).toMatchObject({
      image:
        'registry.example.internal/gatehouse/operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    });
  });

  it('binds the Secrets rules in each namespace of operator.secretNamespaces, or everywhere with ["*"]', {
    timeout: 60_000,
  }, async () => {
    const listed = await render(['--set', 'operator.secretNamespaces={shop,billing}']);
    expect(
      listed.objects
        .filter((o) => o.kind === 'RoleBinding' && o.metadata.name === 'gatehouse-operator-secrets')
        .map((o) => o.metadata.namespace),
    ).toEqual(['shop', 'billing']);
    const env = (objects: KubeObject[]) =>
      podSpec(find(objects, 'Deployment', 'gatehouse-operator'))!.containers[0]!.env ?? [];
    expect(env(listed.objects)).toContainEqual({
      name: 'GATEHOUSE_SECRET_NAMESPACES',
      value: 'shop,billing',
    });
    const everywhere = await render(['--set', 'operator.secretNamespaces={*}']);
    expect(find(everywhere.objects, 'ClusterRoleBinding', 'gatehouse-operator-secrets')).toBeDefined();
    expect(
      everywhere.objects.filter(
        (o) => o.kind === 'RoleBinding' && o.metadata.name === 'gatehouse-operator-secrets',
      ),
    ).toEqual([]);
    expect(env(everywhere.objects).map((e) => e.name)).not.toContain('GATEHOUSE_SECRET_NAMESPACES');
  });

  it('authenticates /metrics by default: the token-check rules of config/rbac bound cluster-wide, readers bound, the ServiceMonitor sending its token', {
    timeout: 60_000,
  }, async () => {
    const rulesOf = (file: string) =>
      (load(readFileSync(join(REPO, 'operator/config/rbac', file), 'utf8')) as { rules: unknown }).rules;
    const env = (objects: KubeObject[]) =>
      podSpec(find(objects, 'Deployment', 'gatehouse-operator'))!.containers[0]!.env ?? [];
    const defaults = await render([]);
    expect(env(defaults.objects)).toContainEqual({ name: 'METRICS_AUTH', value: 'kubernetes' });
    expect(find(defaults.objects, 'ClusterRole', 'gatehouse-operator-metrics-auth').rules).toEqual(
      rulesOf('metrics_auth_role.yaml'),
    );
    expect(find(defaults.objects, 'ClusterRole', 'gatehouse-operator-metrics-reader').rules).toEqual(
      rulesOf('metrics_reader_role.yaml'),
    );
    // Cluster-wide even when the operator watches one namespace: the reviews are cluster-scoped.
    const watching = await render(['--set', 'operator.watchNamespace=shop']);
    expect(find(watching.objects, 'ClusterRoleBinding', 'gatehouse-operator-metrics-auth')).toBeDefined();
    expect(defaults.objects.some((o) => o.kind === 'ServiceMonitor')).toBe(false);
    const scraped = await render([
      '-f',
      valuesFile('metrics-readers', {
        operator: {
          metrics: {
            readers: [{ namespace: 'monitoring', name: 'prometheus-k8s' }],
            serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus' } },
          },
        },
      }),
    ]);
    expect(find(scraped.objects, 'ClusterRoleBinding', 'gatehouse-operator-metrics-reader').subjects).toEqual(
      [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }],
    );
    const monitor = find(scraped.objects, 'ServiceMonitor', 'gatehouse-operator');
    expect(monitor.metadata.labels).toMatchObject({ release: 'kube-prometheus' });
    expect((monitor.spec as { endpoints: unknown[] }).endpoints).toEqual([
      {
        port: 'metrics',
        path: '/metrics',
        interval: '30s',
        bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      },
    ]);
    // Opting out: no token checks, nothing to bind them.
    const open = await render(['--set', 'operator.metrics.auth=none']);
    expect(env(open.objects)).toContainEqual({ name: 'METRICS_AUTH', value: 'none' });
    expect(open.objects.some((o) => o.metadata.name === 'gatehouse-operator-metrics-auth')).toBe(false);
  });

  it('renders CockroachDB without TLS when asked: --insecure everywhere, no password in DATABASE_URL', {
    timeout: 60_000,
  }, async () => {
    const { objects } = await render(['--set', 'cockroachdb.tls.enabled=false']);
    const sts = find(objects, 'StatefulSet', 'gatehouse-cockroachdb-eu-west');
    expect(podSpec(sts)!.containers[0]!.command!.join(' ')).toContain('--insecure');
    expect(podSpec(sts)!.initContainers).toBeUndefined();
    expect(objects.find((o) => o.metadata.name.endsWith('-certs'))).toBeUndefined();
    const db = find(objects, 'Secret', 'gatehouse-db-eu-west') as KubeObject & {
      data: { DATABASE_URL: string };
    };
    expect(Buffer.from(db.data.DATABASE_URL, 'base64').toString()).toMatch(
      /^postgresql:\/\/gatehouse@.*sslmode=disable$/,
    );
  });

  it('uses one generated password everywhere it appears in a render', { timeout: 60_000 }, async () => {
    const { objects } = await render(['-f', TWO_REGION]);
    const decode = (name: string, key: string) =>
      Buffer.from(
        (find(objects, 'Secret', name) as KubeObject & { data: Record<string, string> }).data[key]!,
        'base64',
      ).toString();
    const password = decode('gatehouse-credentials', 'database-password');
    expect(decode('gatehouse-db-us-east', 'DATABASE_URL')).toContain(`:${password}@`);
    const redis = decode('gatehouse-credentials', 'redis-password');
    // The runtime Secret names the primary region's store; each region has its own.
    expect(decode('gatehouse-runtime', 'STANDBY_STORE_URL')).toBe(
      `redis://:${redis}@gatehouse-redis-eu-west.gatehouse-system.svc.cluster.local:6379/0`,
    );
    expect(decode('gatehouse-store-us-east', 'STANDBY_STORE_URL')).toBe(
      `redis://:${redis}@gatehouse-redis-us-east.gatehouse-system.svc.cluster.local:6379/0`,
    );
    const stores = objects.filter(
      (o) => o.kind === 'StatefulSet' && o.metadata.name.startsWith('gatehouse-redis'),
    );
    expect(stores.map((o) => o.metadata.name).sort()).toEqual([
      'gatehouse-redis-eu-west',
      'gatehouse-redis-us-east',
    ]);
    expect(decode('gatehouse-admin', 'GATEHOUSE_ADMIN_TOKEN')).toBe(
      decode('gatehouse-credentials', 'admin-token'),
    );
  });

  const shop = (regions: unknown[]) => [{ name: 'shop', spec: { regions } }];
  const hosts = (p: string) => ({
    api: `${p}.example.com`,
    bypass: [`bypass.${p}-1.example.com`, `bypass.${p}-2.example.com`],
    fallback: [`fallbackapiv1.${p}-1.example.com`, `fallbackapiv1.${p}-2.example.com`],
  });
  const bad: [string, () => string[], RegExp][] = [
    [
      'an app region with one bypass host',
      () => [
        '-f',
        valuesFile('one-bypass', {
          apps: shop([{ name: 'eu-west', hosts: { ...hosts('eu'), bypass: ['bypass.only.example.com'] } }]),
        }),
      ],
      /app "shop", region "eu-west": hosts.bypass must list exactly two host names starting with "bypass." \(clients try both\); it lists 1\./,
    ],
    [
      'an app region with three fallback hosts',
      () => [
        '-f',
        valuesFile('three-fallback', {
          apps: shop([
            {
              name: 'eu-west',
              hosts: {
                ...hosts('eu'),
                fallback: [
                  'fallbackapiv1.a.example.com',
                  'fallbackapiv1.b.example.com',
                  'fallbackapiv1.c.example.com',
                ],
              },
            },
          ]),
        }),
      ],
      /hosts.fallback must list exactly two host names starting with "fallbackapiv1." \(clients try both\); it lists 3\./,
    ],
    [
      'a bypass host without the bypass. prefix',
      () => [
        '-f',
        valuesFile('bypass-prefix', {
          apps: shop([
            {
              name: 'eu-west',
              hosts: { ...hosts('eu'), bypass: ['bypass.a.example.com', 'standby.b.example.com'] },
            },
          ]),
        }),
      ],
      /bypass host "standby.b.example.com" must start with "bypass."\./,
    ],
    [
      'an app region the chart does not have',
      () => ['-f', valuesFile('unknown-region', { apps: shop([{ name: 'ap-south', hosts: hosts('ap') }]) })],
      /app "shop", region "ap-south": the region is not one of the chart's regions \(eu-west\); add it to regions first\./,
    ],
    [
      'one host in two app regions',
      () => [
        '-f',
        TWO_REGION,
        '-f',
        valuesFile('shared-host', {
          apps: shop([
            { name: 'eu-west', hosts: hosts('x') },
            { name: 'us-east', hosts: { ...hosts('y'), api: 'x.example.com' } },
          ]),
        }),
      ],
      /host "x.example.com" is used by app "shop", region "eu-west" and by app "shop", region "us-east": a host routes to one app region only\./,
    ],
    [
      'a region listed twice',
      () => ['--set', 'regions[0].name=eu-west', '--set', 'regions[1].name=eu-west'],
      /region "eu-west" is listed twice in regions: region names must be unique\./,
    ],
    [
      'a primary region that is not a region',
      () => ['--set', 'cockroachdb.primaryRegion=ap-south'],
      /cockroachdb.primaryRegion "ap-south" is not one of the regions \(eu-west\)\./,
    ],
    [
      'region survival with two regions',
      () => ['-f', TWO_REGION, '--set', 'cockroachdb.survivalGoal=region'],
      /surviving a region failure needs at least 3 regions; use survivalGoal "zone" or add regions\./,
    ],
    [
      'two operator replicas without leader election',
      () => ['--set', 'operator.leaderElection.enabled=false'],
      /operator.replicas is 2 but operator.leaderElection.enabled is false: replicas without a leader would all reconcile the same Apps/,
    ],
    [
      'no database at all',
      () => ['--set', 'cockroachdb.enabled=false'],
      /cockroachdb.enabled is false and region "eu-west" has no database: set externalDatabase.url/,
    ],
    [
      'no standby store',
      () => ['--set', 'redis.enabled=false'],
      /redis.enabled is false and externalRedis.url is empty: the standby hosts of every region share one store/,
    ],
    [
      'no admin API',
      () => ['--set', 'adminApi.enabled=false'],
      /adminApi.enabled is false and adminApi.externalUrl is empty: the operator needs an admin API/,
    ],
    [
      'a table in both localities',
      () => ['--set', 'cockroachdb.tables.global={apps,settings,pass_tokens}'],
      /table "pass_tokens" is in both cockroachdb.tables.regionalByRow and cockroachdb.tables.global: a table has one locality\./,
    ],
    [
      'only one of the two certificate Secrets',
      () => ['--set', 'cockroachdb.tls.certsSecret=my-node-certs'],
      /cockroachdb.tls.certsSecret and cockroachdb.tls.clientRootSecret go together/,
    ],
    [
      'names too long for a StatefulSet',
      () => [
        '--set',
        'fullnameOverride=gatehouse-production-europe-cluster',
        '--set',
        'regions[0].name=europe-west-primary',
      ],
      /would be named "gatehouse-production-europe-cluster-cockroachdb-europe-west-primary" \(67 characters\); StatefulSet names must stay within 52/,
    ],
    // values.schema.json
    ['no regions (schema)', () => ['--set', 'regions=null'], /at '\/regions'|regions/],
    [
      'an unpinned CockroachDB image (schema)',
      () => ['--set', 'cockroachdb.image.tag=latest'],
      /at '\/cockroachdb\/image\/tag': 'latest' does not match pattern/,
    ],
    [
      'an unpinned Redis image (schema)',
      () => ['--set', 'redis.image.tag=latest'],
      /at '\/redis\/image\/tag': 'latest' does not match pattern/,
    ],
    [
      'a root pod (schema)',
      () => ['--set', 'cockroachdb.podSecurityContext.runAsNonRoot=false'],
      /at '\/cockroachdb\/podSecurityContext\/runAsNonRoot'/,
    ],
    [
      'a privileged container (schema)',
      () => ['--set', 'operator.containerSecurityContext.privileged=true'],
      /at '\/operator\/containerSecurityContext\/privileged'/,
    ],
    [
      'a misspelt top-level key (schema)',
      () => ['--set', 'cockroachDB.enabled=false'],
      /additional properties 'cockroachDB' not allowed/,
    ],
    [
      'a ServiceMonitor without the metrics Service',
      () => [
        '--set',
        'operator.metrics.serviceMonitor.enabled=true',
        '--set',
        'operator.metrics.service.enabled=false',
      ],
      /operator\.metrics\.serviceMonitor\.enabled needs operator\.metrics\.service\.enabled/,
    ],
    [
      'an unknown metrics auth (schema)',
      () => ['--set', 'operator.metrics.auth=basic'],
      /at '\/operator\/metrics\/auth'/,
    ],
    [
      'a password that would break DATABASE_URL (schema)',
      () => ['--set', 'credentials.databasePassword=p@ss:word/with-specials'],
      /at '\/credentials\/databasePassword': .* does not match pattern/,
    ],
  ];

  it.each(bad)('refuses %s with a readable sentence', { timeout: 60_000 }, async (_name, args, message) => {
    const r = await template(args());
    expect(r.code, r.stdout.slice(0, 500)).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });
});

/**
 * A stand-in for the cockroach binary (no CockroachDB can run here): it records every command and SQL
 * statement, and answers the queries the scripts read from the STUB_* variables.
 */
const COCKROACH_STUB = `#!/usr/bin/env bash
echo "$*" >>"$STUB_LOG.args"
if [[ $1 == init ]]; then echo "ERROR: cluster has already been initialized"; exit 1; fi
shift
queries=()
while (($#)); do if [[ $1 == -e ]]; then queries+=("$2"); shift; fi; shift; done
for q in "\${queries[@]}"; do
  echo "$q" >>"$STUB_LOG"
  case $q in
    *"SHOW REGIONS FROM CLUSTER"*) printf 'region\\n'; printf '%s\\n' $STUB_REGIONS ;;
    *"[SHOW DATABASES]"*) printf 'count\\n%s\\n' "$STUB_MULTI" ;;
    *"[SHOW TABLES FROM"*) printf 'table_name\\tlocality\\n'; printf '%b' "$STUB_TABLES" ;;
    *) echo OK ;;
  esac
done
`;

describe.skipIf(noHelm)('the CockroachDB scripts, run by bash against a stand-in cockroach', () => {
  let dir: string;
  beforeAll(async () => {
    const { objects } = await render(['-f', TWO_REGION]);
    const scripts = find(objects, 'ConfigMap', 'gatehouse-cockroachdb-scripts') as KubeObject & {
      data: Record<string, string>;
    };
    dir = mkdtempSync(join(scratch, 'scripts-'));
    for (const [name, text] of Object.entries(scripts.data)) writeFileSync(join(dir, name), text);
    writeFileSync(join(dir, 'cockroach'), COCKROACH_STUB, { mode: 0o755 });
  }, 60_000);

  function runScript(script: string, env: Record<string, string>) {
    const log = join(dir, `${script}.${Math.random().toString(36).slice(2)}.log`);
    writeFileSync(log, '');
    writeFileSync(`${log}.args`, '');
    const result = spawnSync('bash', [join(dir, script)], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: process.env.PATH,
        COCKROACH_BIN: join(dir, 'cockroach'),
        STUB_LOG: log,
        DATABASE_PASSWORD: 'pw123',
        ...env,
      },
    });
    const sql = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
    return { ...result, sql, args: readFileSync(`${log}.args`, 'utf8') };
  }

  it('parse as bash', () => {
    for (const f of ['common.sh', 'init.sh', 'localities.sh']) {
      const r = spawnSync('bash', ['-n', join(dir, f)], { encoding: 'utf8' });
      expect(r.status, `${f}: ${r.stderr}`).toBe(0);
    }
  });

  it('localities.sh changes nothing before the database is multi-region', () => {
    const r = runScript('localities.sh', { STUB_MULTI: '0', STUB_TABLES: '' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('is not multi-region yet');
    expect(r.sql.filter((q) => q.startsWith('ALTER'))).toEqual([]);
  });

  it('localities.sh alters only the tables that exist and differ, and waits for the others', () => {
    const r = runScript('localities.sh', {
      STUB_MULTI: '1',
      STUB_TABLES: [
        'apps\\tGLOBAL',
        'settings\\tREGIONAL BY TABLE IN PRIMARY REGION',
        'pass_tokens\\tREGIONAL BY TABLE IN PRIMARY REGION',
        'server_tokens\\tREGIONAL BY ROW',
        'app_usage\\tREGIONAL BY TABLE IN PRIMARY REGION',
        '',
      ].join('\\n'),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.sql.filter((q) => q.startsWith('ALTER')).sort()).toEqual([
      'ALTER TABLE gatehouse.public.app_usage SET LOCALITY REGIONAL BY ROW',
      'ALTER TABLE gatehouse.public.pass_tokens SET LOCALITY REGIONAL BY ROW',
      'ALTER TABLE gatehouse.public.settings SET LOCALITY GLOBAL',
    ]);
    expect(r.stdout).toContain('challenge_attempts: not created yet');
    expect(r.stdout).toContain('usage_hourly: not created yet');
    expect(r.stdout).toContain('console_sessions: not created yet');
    expect(r.stdout).toContain('4 table(s) still to come');
    expect(r.args).toContain('--certs-dir=/cockroach/cockroach-certs');
    expect(r.args).toContain('--host=gatehouse-cockroachdb-public.gatehouse-system.svc.cluster.local:26257');
  });

  it('init.sh initializes once, then creates the database, its user, regions and survival goal in order', () => {
    const r = runScript('init.sh', {
      STUB_REGIONS: 'europe-west1 us-east1',
      STUB_MULTI: '1',
      STUB_TABLES: '',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('cluster initialized');
    expect(r.args.split('\n')[0]).toBe(
      'init --certs-dir=/cockroach/cockroach-certs --host=gatehouse-cockroachdb-eu-west-0.gatehouse-cockroachdb.gatehouse-system.svc.cluster.local:26257',
    );
    const ddl = r.sql.filter((q) => !q.startsWith('SELECT'));
    expect(ddl).toEqual([
      'CREATE DATABASE IF NOT EXISTS gatehouse',
      'CREATE USER IF NOT EXISTS gatehouse',
      "ALTER USER gatehouse WITH PASSWORD 'pw123'",
      'GRANT ALL ON DATABASE gatehouse TO gatehouse',
      'ALTER DATABASE gatehouse SET PRIMARY REGION "europe-west1"',
      'ALTER DATABASE gatehouse ADD REGION IF NOT EXISTS "us-east1"',
      'ALTER DATABASE gatehouse SURVIVE ZONE FAILURE',
      'SHOW REGIONS FROM DATABASE gatehouse',
    ]);
    expect(r.stdout).toContain('localities applied; 9 table(s) still to come');
  });

  it('init.sh waits while a region has no live nodes yet', () => {
    const r = spawnSync('timeout', ['3', 'bash', join(dir, 'init.sh')], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        COCKROACH_BIN: join(dir, 'cockroach'),
        STUB_LOG: join(dir, 'wait.log'),
        STUB_REGIONS: 'europe-west1',
      },
    });
    expect(r.status).toBe(124);
    expect(r.stdout).toContain('waiting for nodes in region(s): us-east1');
  });
});

describe.skipIf(noCluster)('against a real kube-apiserver', () => {
  let cp: ControlPlane;
  let schemas: string;
  const renders: Record<string, { yaml: string; objects: KubeObject[] }> = {};

  beforeAll(async () => {
    for (const [name, args] of Object.entries(VARIANTS))
      renders[name] = await render(args, `gatehouse-${name}`);
    ({ cp, schemas } = await startSchemaCluster(renders.default!.objects));
  }, 300_000);

  afterAll(async () => {
    await cp?.stop();
  }, 60_000);

  it.each(Object.keys(VARIANTS))(
    'validates the %s render with kubeconform -strict, offline, against the apiserver schemas',
    { timeout: 120_000 },
    async (name) => {
      const report = await kubeconform(schemas, renders[name]!.yaml);
      expect(report.invalid, report.output.slice(0, 2000)).toEqual([]);
      expect(report.code).toBe(0);
      expect(report.valid).toBe(renders[name]!.objects.length);
    },
  );

  it.each(Object.keys(VARIANTS))(
    'creates the CRD and dry-runs every other object of the %s render on the apiserver',
    { timeout: 180_000 },
    async (name) => {
      const { failures, checked } = await applyDryRun(cp, renders[name]!.objects, `gatehouse-${name}`);
      expect(failures).toEqual([]);
      expect(checked).toBe(renders[name]!.objects.length - 1);
    },
  );

  it('installs for real and keeps every generated secret across an upgrade; each revision has its init Job', {
    timeout: 180_000,
  }, async () => {
    const ns = 'gatehouse-install';
    await ensureNamespace(cp, ns);
    const args = [
      'gh',
      CHART,
      '--namespace',
      ns,
      '--kubeconfig',
      cp.kubeconfigFile,
      '--no-hooks',
      '-f',
      TWO_REGION,
    ];
    const secret = async (name: string) => {
      const res = await cp.call('GET', `/api/v1/namespaces/${ns}/secrets/${name}`);
      expect(res.status, res.text).toBe(200);
      return (res.body as { data: Record<string, string> }).data;
    };
    const install = await run('helm', ['install', ...args]);
    expect(install.code, install.stderr).toBe(0);
    const before = {
      credentials: await secret('gh-gatehouse-credentials'),
      db: await secret('gh-gatehouse-db-us-east'),
      certs: await secret('gh-gatehouse-cockroachdb-node-certs'),
    };
    const upgrade = await run('helm', ['upgrade', ...args]);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(await secret('gh-gatehouse-credentials')).toEqual(before.credentials);
    expect(await secret('gh-gatehouse-db-us-east')).toEqual(before.db);
    expect(await secret('gh-gatehouse-cockroachdb-node-certs')).toEqual(before.certs);
    const password = Buffer.from(before.credentials['database-password']!, 'base64').toString();
    expect(Buffer.from(before.db.DATABASE_URL!, 'base64').toString()).toContain(`:${password}@`);
    const app = await cp.call('GET', `/apis/gatehouse.dev/v1alpha1/namespaces/${ns}/apps/shop`);
    expect(app.status, app.text).toBe(200);
    const jobs = await cp.call('GET', `/apis/batch/v1/namespaces/${ns}/jobs`);
    expect((jobs.body as { items: KubeObject[] }).items.map((j) => j.metadata.name)).toEqual([
      'gh-gatehouse-cockroachdb-init-r2',
    ]);
  });

  it('prints NOTES whose App can be pasted as it is (the apiserver accepts it)', {
    timeout: 60_000,
  }, async () => {
    const r = await run('helm', [
      'install',
      'gatehouse',
      CHART,
      '--namespace',
      'gatehouse-two-region',
      '--dry-run=client',
      '-f',
      TWO_REGION,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const notes = r.stdout.slice(r.stdout.indexOf('NOTES:'));
    const heredoc = /^cat <<'YAML' \| kubectl -n gatehouse-two-region apply -f -\n([\s\S]*?)\nYAML$/m.exec(
      notes,
    );
    expect(heredoc, notes).not.toBeNull();
    const app = load(heredoc![1]!) as KubeObject;
    const res = await cp.call(
      'POST',
      '/apis/gatehouse.dev/v1alpha1/namespaces/gatehouse-two-region/apps?dryRun=All&fieldValidation=Strict',
      app,
    );
    expect(res.status, res.text).toBe(201);
    expect(notes).toContain('kubectl -n gatehouse-two-region logs job/gatehouse-cockroachdb-init-r1 -f');
  });

  it('has the apiserver reject an App whose region lacks a second bypass host (CRD schema and CEL)', {
    timeout: 60_000,
  }, async () => {
    const app = find(renders['two-region']!.objects, 'App', 'shop') as KubeObject & {
      spec: { regions: { hosts: { bypass: string[] } }[] };
    };
    const broken = structuredClone(app);
    broken.spec.regions[0]!.hosts.bypass = ['bypass.one.example.com', 'standby.two.example.com'];
    const res = await cp.call(
      'POST',
      '/apis/gatehouse.dev/v1alpha1/namespaces/gatehouse-two-region/apps?dryRun=All',
      broken,
    );
    expect(res.status).toBe(422);
    expect(res.text).toContain("every host must start with 'bypass.'");
  });
});

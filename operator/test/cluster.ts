import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import pino from 'pino';
import type { App } from '../src/api/v1alpha1/app-types.ts';
import { CRD_FILE } from '../src/api/v1alpha1/crd.ts';
import { API_VERSION, CRD_NAME, KIND } from '../src/api/v1alpha1/groupversion.ts';
import type { OperatorConfig } from '../src/config.ts';
import { Manager, type ManagerOptions } from '../src/manager.ts';
import { KubeClient, type KubeObject } from '../src/runtime/kube-client.ts';
import { APPS, resourcePath } from '../src/runtime/resources.ts';
import { type ControlPlane, startControlPlane } from './control-plane.ts';

export const OPERATOR_DIR = join(import.meta.dirname, '..');

/** REST paths of the kinds the manifests hold (the test applies them as the admin). */
const PLURALS: Record<string, [group: string, version: string, plural: string, namespaced: boolean]> = {
  CustomResourceDefinition: ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions', false],
  Namespace: ['', 'v1', 'namespaces', false],
  ServiceAccount: ['', 'v1', 'serviceaccounts', true],
  ClusterRole: ['rbac.authorization.k8s.io', 'v1', 'clusterroles', false],
  ClusterRoleBinding: ['rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', false],
  Role: ['rbac.authorization.k8s.io', 'v1', 'roles', true],
  RoleBinding: ['rbac.authorization.k8s.io', 'v1', 'rolebindings', true],
  Secret: ['', 'v1', 'secrets', true],
  App: ['gatehouse.dev', 'v1alpha1', 'apps', true],
};

export function pathOf(obj: KubeObject): string {
  const entry = PLURALS[obj.kind ?? ''];
  if (!entry) throw new Error(`no path for kind ${obj.kind}`);
  const [group, version, plural, namespaced] = entry;
  const ns = namespaced ? obj.metadata?.namespace : undefined;
  return resourcePath({ group, version, plural, kind: obj.kind ?? '' }, ns, obj.metadata?.name);
}

/** Server-side applies every document of a YAML file, as the test's admin. */
export async function applyFile(client: KubeClient, file: string): Promise<KubeObject[]> {
  const docs = (loadAll(readFileSync(file, 'utf8')) as KubeObject[]).filter(Boolean);
  for (const doc of docs) await client.apply(pathOf(doc), doc, 'gatehouse-tests');
  return docs;
}

/** Polls `check` until it returns something truthy; the last error or value explains a timeout. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until)
      throw new Error(
        `timed out after ${ms} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The CRD, applied and waited for until Established and served. */
export async function installCrd(kubeConfig: KubeConfig): Promise<void> {
  const admin = new KubeClient(kubeConfig);
  await applyFile(admin, join(OPERATOR_DIR, CRD_FILE));
  await eventually('the CRD to be Established', async () => {
    const crd = await admin.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`,
    );
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  // Discovery of a new group can lag behind Established for a moment.
  await eventually('the App API to be served', () => admin.list(resourcePath(APPS)).then(() => true));
}

/**
 * A control plane with the operator installed as a user would: the CRD (before the controllers start,
 * see startControlPlane), the operator's namespace and its RBAC. The tests put Apps in many namespaces,
 * so the Secrets rules are bound cluster-wide too (the chart's operator.secretNamespaces ["*"]) unless
 * `secretsEverywhere` is false: then only config/rbac's binding in the operator's namespace holds.
 */
export async function startClusterWithOperator(
  options: { secretsEverywhere?: boolean } = {},
): Promise<{ cp: ControlPlane; admin: KubeClient }> {
  const cp = await startControlPlane({ beforeControllers: installCrd });
  console.log(`control plane up in ${cp.startupMs} ms`);
  const admin = new KubeClient(cp.kubeConfig('admin'));
  await applyFile(admin, join(OPERATOR_DIR, 'config/manager/namespace.yaml'));
  const rbac = readdirSync(join(OPERATOR_DIR, 'config/rbac')).filter(
    (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
  );
  for (const f of rbac) await applyFile(admin, join(OPERATOR_DIR, 'config/rbac', f));
  if (options.secretsEverywhere ?? true)
    await admin.apply(
      pathOf({ kind: 'ClusterRoleBinding', metadata: { name: 'gatehouse-operator-secrets-tests' } }),
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'gatehouse-operator-secrets-tests' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'gatehouse-operator-secrets',
        },
        subjects: [{ kind: 'ServiceAccount', name: 'gatehouse-operator', namespace: 'gatehouse-system' }],
      },
      'gatehouse-tests',
    );
  return { cp, admin };
}

/** A namespace with the runtime Secret Apps use by default (the operator refuses an App without it). */
export async function createNamespace(admin: KubeClient, name: string) {
  await admin.apply(
    `/api/v1/namespaces/${name}`,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    'gatehouse-tests',
  );
  await admin.apply(
    `/api/v1/namespaces/${name}/secrets/gatehouse-runtime`,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'gatehouse-runtime', namespace: name },
      stringData: { STANDBY_SYNC_TOKEN: 'test-sync-token' },
    },
    'gatehouse-tests',
  );
}

/** Operator settings for tests: ephemeral ports on loopback, fast probes, small resync. */
export function testConfig(
  adminUrl: string,
  adminToken: string,
  over: Partial<OperatorConfig> = {},
): OperatorConfig {
  return {
    adminUrl,
    adminToken,
    standbyToken: undefined,
    images: { api: 'registry.invalid/gatehouse/api:1', standby: 'registry.invalid/gatehouse/standby:1' },
    runtimeSecret: 'gatehouse-runtime',
    trustedProxies: 'private',
    watchNamespace: undefined,
    databaseRegions: undefined,
    secretNamespaces: undefined,
    leaderElection: {
      enabled: true,
      namespace: 'gatehouse-system',
      name: 'gatehouse-operator-leader',
      identity: `test-${Math.random().toString(36).slice(2, 8)}`,
    },
    manageCrd: false,
    healthPort: 0,
    metricsPort: 0,
    bindAddress: '127.0.0.1',
    kubeApi: { qps: 50, burst: 100 },
    concurrency: 2,
    resyncMs: 30_000,
    cleanupTimeoutMs: 300_000,
    probe: { intervalMs: 100, timeoutMs: 300, failAfter: 3, recoverAfter: 3 },
    logLevel: 'silent',
    ...over,
  };
}

/** A Manager running as the operator's service account (only the RBAC of config/rbac). */
export async function startOperator(
  kubeConfig: KubeConfig,
  config: OperatorConfig,
  extra: Partial<ManagerOptions> = {},
) {
  const manager = new Manager({
    kubeConfig,
    config,
    logger: pino({ level: process.env.OPERATOR_TEST_LOG ?? 'silent' }),
    timings: {
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 300,
      standbyReassertMs: 2000,
      probeStatusRefreshMs: 60_000,
    },
    ...extra,
  });
  await manager.start();
  return manager;
}

type HostsLike = { api: string; bypass: string[]; fallback: string[] };

/**
 * The fixtures' hosts (`*.shop.example`) made the App's own (`*.<name>.<namespace>.example`): the
 * operator refuses a host another App serves, and tests put many Apps in one cluster.
 */
function ownHosts(namespace: string, name: string, spec: Record<string, unknown>) {
  const own = (h: string) => h.replace(/\.shop\.example$/, `.${name}.${namespace}.example`);
  const regions = spec.regions as { hosts?: HostsLike }[] | undefined;
  if (!Array.isArray(regions)) return spec;
  return {
    ...spec,
    regions: regions.map((r) =>
      r?.hosts
        ? {
            ...r,
            hosts: {
              ...r.hosts,
              api: own(r.hosts.api),
              bypass: r.hosts.bypass?.map(own),
              fallback: r.hosts.fallback?.map(own),
            },
          }
        : r,
    ),
  };
}

/** Creates an App the way `kubectl apply` would (with hosts of its own, see ownHosts). */
export async function applyApp(
  admin: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
) {
  return admin.apply<App>(
    resourcePath(APPS, namespace, name),
    {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, namespace },
      spec: ownHosts(namespace, name, spec),
    },
    'kubectl',
  );
}

export const getApp = (admin: KubeClient, namespace: string, name: string) =>
  admin.getOrNull<App>(resourcePath(APPS, namespace, name));

export const condition = (app: App | null, type: string) =>
  app?.status?.conditions?.find((c) => c.type === type);

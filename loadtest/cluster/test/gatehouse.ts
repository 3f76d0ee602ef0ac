import { join } from 'node:path';
import { Gatehouse } from '@gatehouse/node';
import { solveChallenge } from '@gatehouse/node/headless';
import { expect } from 'vitest';
import {
  clusterEnv,
  forward,
  helm,
  isReady,
  type Kube,
  type KubeObject,
  ROOT,
  run,
  script,
  waitFor,
} from './harness.ts';

/** Gatehouse on the local cluster: the chart (helm), an App as a platform team writes it, its pods. */

export const NS = 'gatehouse-system';
const POSTGRES = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const psql = (sql: string) => run('psql', [POSTGRES, '-v', 'ON_ERROR_STOP=1', '-qc', sql]);

/** A fresh database on the host's PostgreSQL (dropped first if a failed run left it). */
export async function freshDatabase(database: string): Promise<void> {
  await psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await psql(`CREATE DATABASE ${database}`);
}

export async function dropDatabase(database: string): Promise<void> {
  await psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch((e) => console.warn(e));
}

/** The database's URL as the pods reach it (the host's PostgreSQL through the hub's relay). */
export const databaseUrl = (database: string) =>
  `postgres://postgres@${clusterEnv().CLUSTER_DATABASE_HOST}/${database}`;

/** A fresh database, then `helm install` with loadtest/cluster/values.yaml. */
export async function installChart(database: string): Promise<void> {
  await freshDatabase(database);
  await helm(
    'install',
    'gatehouse',
    join(ROOT, 'charts/gatehouse'),
    '--namespace',
    NS,
    '--create-namespace',
    '-f',
    join(ROOT, 'loadtest/cluster/values.yaml'),
    '--set',
    `externalDatabase.url=${databaseUrl(database)}`,
    '--wait',
    '--timeout',
    '300s',
  );
}

export async function uninstallChart(database: string): Promise<void> {
  await helm('uninstall', 'gatehouse', '--namespace', NS, '--wait', '--timeout', '120s').catch((e) =>
    console.warn(e),
  );
  await dropDatabase(database);
}

/**
 * The risk policy of an App whose end users are one address: all load of the local cluster comes
 * through one relay. No per-address limit, and the invisible tier whatever the score (a load tool cannot
 * solve an image challenge).
 */
export const LOAD_RISK_POLICY = {
  invisible_below: 101,
  image_below: 101,
  rate_limit: { ip_per_minute: 100_000_000, high_risk_ip_per_minute: 100_000_000 },
};

/** An App in test mode (the invisible tier), on the chart's Secrets, `apiReplicas` API pods per region. */
export function appManifest(
  name: string,
  regions: string[],
  apiReplicas = 2,
  riskPolicy?: Record<string, unknown>,
) {
  return {
    apiVersion: 'gatehouse.dev/v1alpha1',
    kind: 'App',
    metadata: { name },
    spec: {
      plan: 'free',
      testMode: true,
      ...(riskPolicy ? { riskPolicy } : {}),
      runtimeSecretRef: { name: 'gatehouse-runtime' },
      regions: regions.map((r) => ({
        name: r,
        replicas: apiReplicas,
        standby: { replicas: 1 },
        nodeSelector: { 'topology.kubernetes.io/region': r },
        databaseSecretRef: { name: `gatehouse-db-${r}`, key: 'DATABASE_URL' },
        // No Ingress controller or public DNS here: the operator probes the region's API Service.
        probeUrl: `http://${name}-${r}-api.${NS}.svc.cluster.local`,
        hosts: {
          api: `${r}.captcha.${name}.test`,
          bypass: [`bypass.${r}-1.captcha.${name}.test`, `bypass.${r}-2.captcha.${name}.test`],
          fallback: [
            `fallbackapiv1.${r}-1.captcha.${name}.test`,
            `fallbackapiv1.${r}-2.captcha.${name}.test`,
          ],
        },
      })),
    },
  };
}

export const ownedBy = (app: string) => `labelSelector=${encodeURIComponent(`gatehouse.dev/app=${app}`)}`;

/** Applies the App and waits until all its pods (API, bypass, fallback per region) are Ready. */
export async function applyApp(
  kube: Kube,
  name: string,
  regions: string[],
  apiReplicas = 2,
  riskPolicy?: Record<string, unknown>,
): Promise<KubeObject[]> {
  await kube.create(
    `/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps`,
    appManifest(name, regions, apiReplicas, riskPolicy),
  );
  let seen = '';
  try {
    return await waitFor(`every pod of App ${name} Ready`, 180_000, async () => {
      const items = await kube.list(`/api/v1/namespaces/${NS}/pods?${ownedBy(name)}`);
      seen = items.map((p) => `${p.metadata.name}: ${isReady(p) ? 'Ready' : p.status?.phase}`).join(', ');
      return items.length === regions.length * (apiReplicas + 2) && items.every(isReady) ? items : undefined;
    });
  } catch (e) {
    throw new Error(`${e} (pods: ${seen})`);
  }
}

/** The app key and secret the operator registered and wrote to `<app>-credentials`. */
export async function appCredentials(
  kube: Kube,
  name: string,
): Promise<{ appKey: string; appSecret: string }> {
  const secret = await kube.get(`/api/v1/namespaces/${NS}/secrets/${name}-credentials`);
  const read = (k: string) => Buffer.from(secret.data[k], 'base64').toString('utf8');
  return { appKey: read('app_key'), appSecret: read('app_secret') };
}

/**
 * What an end user and an integrator do across regions: a headless client solves a challenge through
 * region `a`'s API Service, the integrator validates the pass token once through region `b`'s, and a
 * second validation (through `a`) is refused as already used.
 */
export async function solveInAValidateInB(kube: Kube, app: string, [a, b]: [string, string], port: number) {
  const apiA = await forward(`${app}-api-a`, port, `${NS}/${app}-${a}-api:80`, a);
  const apiB = await forward(`${app}-api-b`, port + 1, `${NS}/${app}-${b}-api:80`, b);
  try {
    const { appKey, appSecret } = await appCredentials(kube, app);
    const solved = await solveChallenge({ baseUrl: apiA, appKey, action: 'login', bypassServers: [] });
    expect(solved).toMatchObject({ route: 'main', tier: 'invisible', clientOnly: false });
    expect(solved.passToken).toMatch(/^pt_/);

    const inB = new Gatehouse({ appKey, appSecret, baseUrl: apiB, maxRetries: 0, backupServers: [] });
    const first = await inB.validate(solved.passToken, { expectedAction: 'login' });
    expect(first, JSON.stringify(first)).toMatchObject({ valid: true, accepted: true, action: 'login' });
    const inA = new Gatehouse({ appKey, appSecret, baseUrl: apiA, maxRetries: 0, backupServers: [] });
    const again = await inA.validate(solved.passToken, { expectedAction: 'login' });
    expect(again).toMatchObject({ valid: false, errorCode: 'token_already_used' });
  } finally {
    await script('forward.sh', 'stop', `${app}-api-a`);
    await script('forward.sh', 'stop', `${app}-api-b`);
  }
}

/** Deletes the App and waits until it and every object the operator made for it are gone. */
export async function deleteApp(kube: Kube, app: string): Promise<void> {
  expect(await kube.delete(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${app}`)).toBe(200);
  const owned = ownedBy(app);
  await waitFor('the App and its objects gone', 120_000, async () => {
    const left = [
      ...(await kube.list(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps`)).filter(
        (x) => x.metadata.name === app,
      ),
      ...(await kube.list(`/apis/apps/v1/namespaces/${NS}/deployments?${owned}`)),
      ...(await kube.list(`/api/v1/namespaces/${NS}/services?${owned}`)),
      ...(await kube.list(`/api/v1/namespaces/${NS}/pods?${owned}`)),
      ...(await kube.list(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets?${owned}`)),
      ...(await kube.list(`/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses?${owned}`)),
    ];
    return left.length === 0;
  });
}

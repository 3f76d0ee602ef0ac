import { describe, expect, it } from 'vitest';
import type { App } from '../src/api/v1alpha1/app-types.ts';
import { DEPLOYMENTS, resourcePath } from '../src/runtime/resources.ts';
import { applyApp, condition, createNamespace, eventually, getApp } from './cluster.ts';
import { controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';
import { useOperatorWithApi } from './operator-with-api.ts';

/*
 * The App specs an outside review found admitted although nothing could run them. Those the schema can
 * judge are refused by the apiserver itself (a server-side dry run, as `kubectl apply --dry-run=server`);
 * those that depend on other objects (a Secret, another App's hosts, the database's regions) make the
 * App Ready=False with reason InvalidSpec, and nothing is rendered for it.
 */

const NS = 'admission';

describe.runIf(controlPlaneAvailable())('Admission of invalid App specs on a real kube-apiserver', () => {
  const f = useOperatorWithApi({
    namespaces: [NS],
    config: { databaseRegions: ['eu', 'us', 'europe-west1', 'us-east1'] },
  });
  const dryRun = async (name: string, spec: unknown) => {
    try {
      await f.admin.request(
        'PATCH',
        resourcePath({ group: 'gatehouse.dev', version: 'v1alpha1', plural: 'apps', kind: 'App' }, NS, name),
        {
          body: {
            apiVersion: 'gatehouse.dev/v1alpha1',
            kind: 'App',
            metadata: { name, namespace: NS },
            spec,
          },
          contentType: 'application/apply-patch+yaml',
          query: { fieldManager: 'kubectl', dryRun: 'All' },
        },
      );
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  const eu = region('eu');

  const refused: [string, string, unknown, RegExp][] = [
    ['a name with a dot', 'my.app', appSpec(), /App names must be DNS labels/],
    ['a name starting with a digit', '1shop', appSpec(), /App names must be DNS labels/],
    [
      'a 600 KB unknown riskPolicy field',
      'big-policy',
      appSpec({ riskPolicy: { notes: 'x'.repeat(600_000) } as never }),
      /riskPolicy\.notes|unknown field|field not declared in schema/,
    ],
    [
      'riskPolicy velocity of the wrong type',
      'velocity',
      appSpec({ riskPolicy: { velocity: 'fast' } as never }),
      /\.spec\.riskPolicy\.velocity: expected map/,
    ],
    [
      'an api image with a space inside',
      'img-inner',
      appSpec({ images: { api: 'ghcr.io/gatehouse/api :1' } }),
      /spec\.images\.api.*should match/,
    ],
    [
      'an api image with a leading space',
      'img-lead',
      appSpec({ images: { api: ' ghcr.io/gatehouse/api:1' } }),
      /spec\.images\.api.*should match/,
    ],
    [
      'ingressClassName Bad_Class',
      'ingress-class',
      appSpec({ ingressClassName: 'Bad_Class' }),
      /spec\.ingressClassName.*should match/,
    ],
    [
      'a nodeSelector value with a space',
      'ns-value',
      appSpec({ regions: [{ ...eu, nodeSelector: { zone: 'a b' } }] }),
      /nodeSelector\.zone.*should match/,
    ],
    [
      'a nodeSelector key that is not a label key',
      'ns-key',
      appSpec({ regions: [{ ...eu, nodeSelector: { 'bad key!': 'a' } }] }),
      /every key must be a label key/,
    ],
    [
      'tlsSecretName Not_Valid',
      'tls-name',
      appSpec({ regions: [{ ...eu, tlsSecretName: 'Not_Valid' }] }),
      /tlsSecretName.*should match/,
    ],
  ];

  for (const [what, name, spec, message] of refused)
    it(`refuses ${what} at admission`, async () => {
      expect(await dryRun(name, spec)).toMatch(message);
    });

  it('still accepts what those rules must let through', async () => {
    const spec = appSpec({
      images: {
        api: 'registry.example:5000/team/gatehouse-api:v1.2.3-rc.1',
        standby: `ghcr.io/gatehouse/standby@sha256:${'a'.repeat(64)}`,
      },
      ingressClassName: 'nginx.internal',
      riskPolicy: {
        invisible_below: 30,
        velocity: { ip: [10, 40], app: 5000 },
        rate_limit: { ip_per_minute: 60 },
        reputation: { deny: ['203.0.113.0/24', '2001:db8::1'] },
      },
      regions: [
        {
          ...eu,
          nodeSelector: { 'topology.kubernetes.io/region': 'europe-west1', pool: 'gate_house.1' },
          tlsSecretName: 'eu-tls',
        },
      ],
    });
    expect(await dryRun('valid-one', spec)).toBe('accepted');
    expect(await dryRun('a1-shop', appSpec())).toBe('accepted');
  });

  const invalidReason = async (name: string) =>
    eventually(`${name}: Ready=False InvalidSpec`, async () => {
      const app = await getApp(f.admin, NS, name);
      const ready = condition(app, 'Ready');
      return ready?.reason === 'InvalidSpec' && { app: app as App, message: ready.message };
    });
  const deploymentsOf = async (name: string) =>
    (await f.admin.list<{ metadata: { name: string } }>(resourcePath(DEPLOYMENTS, NS))).items.filter((d) =>
      d.metadata.name.startsWith(`${name}-`),
    );

  it('a region or locality the database does not have: Ready=False InvalidSpec naming it, nothing rendered', async () => {
    const mars = region('mars');
    await applyApp(f.admin, NS, 'mars', appSpec({ regions: [mars] }));
    expect((await invalidReason('mars')).message).toContain(
      'region mars: locality mars is not a database region (eu, us, europe-west1, us-east1); set regions[].locality',
    );
    await applyApp(f.admin, NS, 'north', appSpec({ regions: [region('eu', { locality: 'mars-north-9' })] }));
    const { app, message } = await invalidReason('north');
    expect(message).toContain('region eu: locality mars-north-9 is not a database region');
    expect(condition(app, 'Degraded')).toMatchObject({ status: 'True', reason: 'InvalidSpec' });
    expect(app.status?.observedGeneration).toBeUndefined();
    expect(await deploymentsOf('mars')).toEqual([]);
    expect(await deploymentsOf('north')).toEqual([]);
  });

  it('a runtimeSecretRef to a missing Secret: InvalidSpec until the Secret exists', async () => {
    await applyApp(f.admin, NS, 'nosecret', appSpec({ runtimeSecretRef: { name: 'not-there' } }));
    expect((await invalidReason('nosecret')).message).toContain(
      `Secret not-there (runtime environment) does not exist in namespace ${NS}`,
    );
    expect(await deploymentsOf('nosecret')).toEqual([]);
    await f.admin.apply(
      `/api/v1/namespaces/${NS}/secrets/not-there`,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'not-there', namespace: NS },
        stringData: { A: 'b' },
      },
      'gatehouse-tests',
    );
    await eventually(
      'the Deployments once the Secret exists',
      async () => (await deploymentsOf('nosecret')).length === 6,
      90_000,
    );
  });

  it("a region's database Secret without its key: InvalidSpec naming the key", async () => {
    await f.admin.apply(
      `/api/v1/namespaces/${NS}/secrets/db-eu`,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-eu', namespace: NS },
        stringData: { other: 'x' },
      },
      'gatehouse-tests',
    );
    await applyApp(
      f.admin,
      NS,
      'dbkey',
      appSpec({ regions: [region('eu', { databaseSecretRef: { name: 'db-eu', key: 'DATABASE_URL' } })] }),
    );
    expect((await invalidReason('dbkey')).message).toContain(
      'Secret db-eu (region eu database URL) has no key DATABASE_URL',
    );
  });

  it('a credentialsSecretRef to a Secret without app_key/app_secret: Registered=False CredentialsInvalid', async () => {
    await f.admin.apply(
      `/api/v1/namespaces/${NS}/secrets/empty-creds`,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'empty-creds', namespace: NS },
        stringData: { x: 'y' },
      },
      'gatehouse-tests',
    );
    await applyApp(
      f.admin,
      NS,
      'badcreds',
      appSpec({
        credentialsSecretRef: { name: 'empty-creds' },
        regions: [region('eu', { hosts: { ...region('eu').hosts, api: 'api.badcreds.example' } })],
      }),
    );
    const app = await eventually('Registered=False CredentialsInvalid', async () => {
      const a = await getApp(f.admin, NS, 'badcreds');
      return condition(a, 'Registered')?.reason === 'CredentialsInvalid' && a;
    });
    expect(condition(app, 'Registered')?.message).toBe('Secret empty-creds lacks app_key or app_secret');
    expect(condition(app, 'Ready')).toMatchObject({ status: 'False', reason: 'NotRegistered' });
  });

  it('two Apps claiming one host: the first keeps it, the second is InvalidSpec and renders nothing; freed when the first goes', async () => {
    const ns2 = 'admission-other';
    await createNamespace(f.admin, ns2);
    const hosts = { ...region('eu').hosts, api: 'api.contested.example' };
    await applyApp(f.admin, ns2, 'first', appSpec({ regions: [region('eu', { hosts })] }));
    await eventually(
      'the first App rendered',
      async () => (await f.admin.list(resourcePath(DEPLOYMENTS, ns2))).items.length === 3,
    );
    await applyApp(
      f.admin,
      NS,
      'second',
      appSpec({
        regions: [
          region('eu', {
            hosts: {
              ...hosts,
              bypass: ['bypass.x.example', 'bypass.y.example'],
              fallback: ['fallbackapiv1.x.example', 'fallbackapiv1.y.example'],
            },
          }),
        ],
      }),
    );
    expect((await invalidReason('second')).message).toBe(
      `host api.contested.example is already served by App ${ns2}/first`,
    );
    expect(await deploymentsOf('second')).toEqual([]);
    const first = await getApp(f.admin, ns2, 'first');
    expect(condition(first, 'Ready')?.reason).not.toBe('InvalidSpec');
    await f.admin.request(
      'DELETE',
      resourcePath(
        { group: 'gatehouse.dev', version: 'v1alpha1', plural: 'apps', kind: 'App' },
        ns2,
        'first',
      ),
    );
    await eventually(
      'the second App rendered once the host is free',
      async () => (await deploymentsOf('second')).length === 3,
      90_000,
    );
  });
});

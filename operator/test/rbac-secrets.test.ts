import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../src/manager.ts';
import { KubeClient } from '../src/runtime/kube-client.ts';
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
import { secretData } from './objects.ts';

const HOME = 'gatehouse-system';

/** With config/rbac as shipped: Secrets are readable in the operator's namespace only, and it says so. */
describe.runIf(controlPlaneAvailable())('Least-privilege Secrets RBAC on a real kube-apiserver', () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  let api: TestApi;
  let manager: Manager;

  beforeAll(async () => {
    ({ cp, admin } = await startClusterWithOperator({ secretsEverywhere: false }));
    await createNamespace(admin, HOME);
    await createNamespace(admin, 'elsewhere');
    api = await startTestApi();
    manager = await startOperator(
      cp.kubeConfig('operator'),
      testConfig(api.url, api.runtime.adminToken, { secretNamespaces: [HOME] }),
      { probe: async () => true, standbyTargets: async () => [] },
    );
  }, 300_000);
  afterAll(async () => {
    await manager?.stop();
    await api?.close();
    await cp?.stop();
  }, 60_000);

  it("the operator's service account cannot read Secrets outside the namespaces it manages", async () => {
    const operator = new KubeClient(cp.kubeConfig('operator'));
    await expect(operator.get(`/api/v1/namespaces/elsewhere/secrets/gatehouse-runtime`)).rejects.toThrow(
      /forbidden/i,
    );
    await expect(operator.list('/api/v1/secrets')).rejects.toThrow(/forbidden/i);
    expect(await operator.get(`/api/v1/namespaces/${HOME}/secrets/gatehouse-runtime`)).toBeTruthy();
  });

  it('an App in a managed namespace is registered and its credentials Secret written', async () => {
    await applyApp(admin, HOME, 'home', appSpec({ regions: [region('eu')] }));
    const secret = await eventually('the credentials Secret', () =>
      secretData(admin, HOME, 'home-credentials'),
    );
    expect(secret.app_key).toMatch(/^ak_/);
    await eventually(
      'Registered=True',
      async () => condition(await getApp(admin, HOME, 'home'), 'Registered')?.status === 'True',
    );
  });

  it('an App elsewhere: Ready=False InvalidSpec saying where Secrets may be read', async () => {
    await applyApp(
      admin,
      'elsewhere',
      'away',
      appSpec({ regions: [region('eu', { hosts: { ...region('eu').hosts, api: 'api.away.example' } })] }),
    );
    const ready = await eventually('InvalidSpec', async () => {
      const c = condition(await getApp(admin, 'elsewhere', 'away'), 'Ready');
      return c?.reason === 'InvalidSpec' && c;
    });
    expect(ready.message).toBe(
      `the operator may not read Secrets in namespace elsewhere (it may in ${HOME}): add it to operator.secretNamespaces (--secret-namespaces)`,
    );
  });
});

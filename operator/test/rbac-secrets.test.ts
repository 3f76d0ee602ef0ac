import { describe, expect, it } from 'vitest';
import { KubeClient } from '../src/runtime/kube-client.ts';
import { applyApp, condition, eventually, getApp } from './cluster.ts';
import { controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';
import { secretData } from './objects.ts';
import { useOperatorWithApi } from './operator-with-api.ts';

const HOME = 'gatehouse-system';

/** With config/rbac as shipped: Secrets are readable in the operator's namespace only, and it says so. */
describe.runIf(controlPlaneAvailable())('Least-privilege Secrets RBAC on a real kube-apiserver', () => {
  const f = useOperatorWithApi({
    namespaces: [HOME, 'elsewhere'],
    cluster: { secretsEverywhere: false },
    config: { secretNamespaces: [HOME] },
  });

  it("the operator's service account cannot read Secrets outside the namespaces it manages", async () => {
    const operator = new KubeClient(f.cp.kubeConfig('operator'));
    await expect(operator.get(`/api/v1/namespaces/elsewhere/secrets/gatehouse-runtime`)).rejects.toThrow(
      /forbidden/i,
    );
    await expect(operator.list('/api/v1/secrets')).rejects.toThrow(/forbidden/i);
    expect(await operator.get(`/api/v1/namespaces/${HOME}/secrets/gatehouse-runtime`)).toBeTruthy();
  });

  it('an App in a managed namespace is registered and its credentials Secret written', async () => {
    await applyApp(f.admin, HOME, 'home', appSpec({ regions: [region('eu')] }));
    const secret = await eventually('the credentials Secret', () =>
      secretData(f.admin, HOME, 'home-credentials'),
    );
    expect(secret.app_key).toMatch(/^ak_/);
    await eventually(
      'Registered=True',
      async () => condition(await getApp(f.admin, HOME, 'home'), 'Registered')?.status === 'True',
    );
  });

  it('an App elsewhere: Ready=False InvalidSpec saying where Secrets may be read', async () => {
    await applyApp(
      f.admin,
      'elsewhere',
      'away',
      appSpec({ regions: [region('eu', { hosts: { ...region('eu').hosts, api: 'api.away.example' } })] }),
    );
    const ready = await eventually('InvalidSpec', async () => {
      const c = condition(await getApp(f.admin, 'elsewhere', 'away'), 'Ready');
      return c?.reason === 'InvalidSpec' && c;
    });
    expect(ready.message).toBe(
      `the operator may not read Secrets in namespace elsewhere (it may in ${HOME}): add it to operator.secretNamespaces (--secret-namespaces)`,
    );
  });
});

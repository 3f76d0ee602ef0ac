import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOperatorConfig } from '../src/config.ts';
import type { Manager } from '../src/manager.ts';
import type { KubeClient } from '../src/runtime/kube-client.ts';
import { startClusterWithOperator, startOperator, testConfig } from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable } from './control-plane.ts';

/*
 * /metrics as shipped: a bearer token the apiserver authenticates (TokenReview) and allows `get` on the
 * non-resource URL /metrics (SubjectAccessReview), as controller-runtime's metrics filter does. The
 * tokens are real service-account tokens (TokenRequest), the reader's right the metrics-reader
 * ClusterRole of config/rbac, bound the way the chart binds operator.metrics.readers.
 */
const NS = 'monitoring';

describe.runIf(controlPlaneAvailable())('/metrics needs a token allowed to read it', () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  let manager: Manager;
  const tokens: Record<string, string> = {};
  const scrape = (token?: string) =>
    fetch(`${manager.metricsUrl}/metrics`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    }).then(async (r) => ({ status: r.status, text: await r.text() }));

  /** A service account's token, as a Prometheus pod has mounted. */
  async function serviceAccountToken(name: string) {
    await admin.create(`/api/v1/namespaces/${NS}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: NS },
    });
    const review = await admin.create<{ status: { token: string } }>(
      `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    return review.status.token;
  }

  beforeAll(async () => {
    ({ cp, admin } = await startClusterWithOperator());
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    tokens.prometheus = await serviceAccountToken('prometheus');
    tokens.nosy = await serviceAccountToken('nosy');
    await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-reads-gatehouse-operator-metrics' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'gatehouse-operator-metrics-reader',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: NS }],
    });
    // The shipped default, from the command line's defaults.
    const { metricsAuth } = loadOperatorConfig([], {
      GATEHOUSE_ADMIN_URL: 'http://127.0.0.1:9',
      GATEHOUSE_ADMIN_TOKEN: 'a'.repeat(32),
    });
    expect(metricsAuth).toBe('kubernetes');
    manager = await startOperator(
      cp.kubeConfig('operator'),
      testConfig('http://127.0.0.1:9', 'a'.repeat(32), { metricsAuth }),
    );
  }, 300_000);
  afterAll(async () => {
    await manager?.stop();
    await cp?.stop();
  }, 60_000);

  it('refuses a scrape without a token, or with one the apiserver does not know (401)', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape('not-a-token')).status).toBe(401);
    expect((await scrape(`${tokens.prometheus}x`)).status).toBe(401);
  });

  it('refuses a known identity without the right to read /metrics (403)', async () => {
    const r = await scrape(tokens.nosy);
    expect(r.status).toBe(403);
    expect(r.text).not.toMatch(/gatehouse_operator_/);
  });

  it('serves the metrics to a reader bound to the metrics-reader ClusterRole', async () => {
    const r = await scrape(tokens.prometheus);
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^gatehouse_operator_leader /m);
    // Again, from its cache: the same answer.
    expect((await scrape(tokens.prometheus)).status).toBe(200);
  });

  it('leaves the health endpoints open (the kubelet has no token)', async () => {
    expect((await fetch(`${manager.healthUrl}/healthz`)).status).toBe(200);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyDryRun,
  kubeconform,
  type KubeObject as SchemaObject,
  writeSchemas,
} from '../../charts/test/lib/kube.ts';
import { missingTools } from '../../charts/test/lib/tools.ts';
import type { App } from '../src/api/v1alpha1/app-types.ts';
import { desiredObjects } from '../src/controllers/desired/index.ts';
import type { KubeClient, KubeObject } from '../src/runtime/kube-client.ts';
import { APPS, DEPLOYMENTS, resourcePath } from '../src/runtime/resources.ts';
import { applyApp, createNamespace, OPERATOR_DIR, startClusterWithOperator } from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable } from './control-plane.ts';
import { appSpec, makeApp, region } from './fixtures.ts';

const NS = 'checks';
const noKubeconform =
  controlPlaneAvailable() && missingTools('operator/test/crd-validation.test.ts', ['kubeconform']).length > 0;

/** What the apiserver itself refuses, from the CRD's schema and CEL rules (no operator running). */
describe.runIf(controlPlaneAvailable())('App validation by the apiserver (schema and CEL rules)', () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  const refusal = async (name: string, spec: unknown) => {
    try {
      await applyApp(admin, NS, name, spec as Record<string, unknown>);
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };

  beforeAll(async () => {
    ({ cp, admin } = await startClusterWithOperator());
    await createNamespace(admin, NS);
  }, 300_000);
  afterAll(async () => {
    await cp?.stop();
  }, 60_000);

  it('accepts the two-region sample (server-side dry run) and fills the defaults', async () => {
    const sample = load(
      readFileSync(join(OPERATOR_DIR, 'config/samples/gatehouse_v1alpha1_app.yaml'), 'utf8'),
    ) as KubeObject;
    await createNamespace(admin, 'shop');
    const stored = await admin.request<App>('PATCH', resourcePath(APPS, 'shop', 'shop'), {
      body: sample,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'kubectl', dryRun: 'All' },
    });
    expect(stored.spec.regions.map((r) => r.name)).toEqual(['eu', 'us']);
    const plain = await applyApp(admin, NS, 'defaults', { regions: [region('eu')] });
    expect(plain.spec).toMatchObject({
      plan: 'free',
      serverTokenRequired: false,
      testMode: false,
      disabled: false,
    });
    expect(plain.spec.regions[0]).toMatchObject({ replicas: 2 });
  });

  it("accepts the operator's own Deployment (config/manager, server-side dry run)", async () => {
    const manager = load(
      readFileSync(join(OPERATOR_DIR, 'config/manager/manager.yaml'), 'utf8'),
    ) as KubeObject;
    const stored = await admin.request<{ spec: { replicas: number } }>(
      'PATCH',
      resourcePath(DEPLOYMENTS, 'gatehouse-system', 'gatehouse-operator'),
      {
        body: manager,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'kubectl', dryRun: 'All' },
      },
    );
    expect(stored.spec.replicas).toBe(2);
  });

  it('refuses standby hosts without their prefix, and a pair that is not two distinct hosts', async () => {
    const bad = region('eu');
    expect(
      await refusal(
        'a1',
        appSpec({
          regions: [{ ...bad, hosts: { ...bad.hosts, bypass: ['x.shop.example', 'bypass.b.shop.example'] } }],
        }),
      ),
    ).toContain("every host must start with 'bypass.'");
    expect(
      await refusal(
        'a2',
        appSpec({
          regions: [{ ...bad, hosts: { ...bad.hosts, fallback: ['fallbackapiv1.a.x', 'bypass.b.x'] } }],
        }),
      ),
    ).toContain("every host must start with 'fallbackapiv1.'");
    expect(
      await refusal(
        'a3',
        appSpec({ regions: [{ ...bad, hosts: { ...bad.hosts, bypass: ['bypass.a.x'] } }] }),
      ),
    ).toMatch(/at least 2 items/);
    expect(
      await refusal(
        'a4',
        appSpec({ regions: [{ ...bad, hosts: { ...bad.hosts, bypass: ['bypass.a.x', 'bypass.a.x'] } }] }),
      ),
    ).toMatch(/duplicate entries|Duplicate value/);
    expect(
      await refusal('a5', appSpec({ regions: [{ ...bad, hosts: { ...bad.hosts, api: 'bypass.api.x' } }] })),
    ).toContain('the api host must not be a standby host name');
  });

  it('refuses duplicate region names, a host shared by two regions, a long App name, a bad risk policy', async () => {
    expect(await refusal('b1', appSpec({ regions: [region('eu'), region('eu')] }))).toMatch(
      /duplicate entries|Duplicate value/,
    );
    const eu = region('eu');
    const us = region('us', { hosts: { ...region('us').hosts, api: eu.hosts.api } });
    expect(await refusal('b2', appSpec({ regions: [eu, us] }))).toContain(
      'a host name may belong to one region only',
    );
    expect(await refusal('x'.repeat(31), appSpec())).toContain('App names are at most 30 characters');
    expect(await refusal('b3', appSpec({ riskPolicy: { invisible_below: 80, image_below: 50 } }))).toContain(
      'invisible_below must not exceed image_below',
    );
    expect(await refusal('b4', appSpec({ regions: [region('EU')] }))).toMatch(/should match/);
    expect(await refusal('b5', appSpec({ plan: 'gold' as 'pro' }))).toMatch(/Unsupported value: "gold"/);
    // GATEHOUSE_DB_REGION the API would refuse at start (core/src/db/region.ts DB_REGION_PATTERN).
    expect(await refusal('b6', appSpec({ regions: [region('eu', { locality: 'Europe West 1' })] }))).toMatch(
      /locality.*should match/,
    );
  });

  it("checks an App's trustedProxies: hop counts and lists of addresses, CIDRs and names", async () => {
    for (const [i, good] of [
      '2',
      'private',
      'private, 173.245.48.0/20, 2400:cb00::/32',
      '198.51.100.7',
    ].entries())
      expect(await refusal(`tp-ok-${i}`, appSpec({ trustedProxies: good }))).toBe('accepted');
    for (const [i, bad] of ['0', 'true', '*', 'privat', '10.0.0.0/33', '10.0.0.1,,private'].entries())
      expect(await refusal(`tp-bad-${i}`, appSpec({ trustedProxies: bad }))).toMatch(
        /spec\.trustedProxies: Invalid value: .*should match/,
      );
  });

  it('refuses a change of credentialsSecretRef once set (transition rule)', async () => {
    await applyApp(admin, NS, 'c1', appSpec({ credentialsSecretRef: { name: 'first' } }));
    expect(await refusal('c1', appSpec({ credentialsSecretRef: { name: 'second' } }))).toContain(
      'credentialsSecretRef is immutable',
    );
    expect(
      await refusal('c1', appSpec({ credentialsSecretRef: { name: 'first' }, plan: 'enterprise' })),
    ).toBe('accepted');
  });

  it.skipIf(noKubeconform)(
    'validates what the operator builds for an App (NetworkPolicies included): kubeconform -strict and a dry run',
    { timeout: 120_000 },
    async () => {
      // NetworkPolicies are never enforced here (no network plugin on this control plane): this checks
      // that they are well-formed and accepted, not that they block traffic (docs/operator.md).
      const objects = desiredObjects(makeApp(), {
        images: { api: 'ghcr.io/gatehouse/api:0.1.0', standby: 'ghcr.io/gatehouse/standby:0.1.0' },
        runtimeSecret: 'gatehouse-runtime',
        trustedProxies: 'private',
        operatorNamespace: 'gatehouse-system',
      }).map((d) => d.object as unknown as SchemaObject);
      const kinds = new Set(objects.map((o) => o.kind));
      expect([...kinds].sort()).toEqual(
        ['Deployment', 'Ingress', 'NetworkPolicy', 'PodDisruptionBudget', 'Service'].sort(),
      );
      expect(objects.filter((o) => o.kind === 'NetworkPolicy')).toHaveLength(4);
      const { location } = await writeSchemas(cp, join(cp.work, 'schemas'));
      const report = await kubeconform(location, objects.map((o) => JSON.stringify(o)).join('\n---\n'));
      expect(report.invalid, report.output.slice(0, 2000)).toEqual([]);
      expect(report.valid).toBe(objects.length);
      // The schemas are strict: a misspelt NetworkPolicy field is caught.
      const broken = structuredClone(objects.find((o) => o.kind === 'NetworkPolicy')!);
      (broken.spec as Record<string, unknown>).podSelectr = {};
      const refused = await kubeconform(location, JSON.stringify(broken));
      expect(refused.invalid.join('\n')).toMatch(/NetworkPolicy .*podSelectr/);
      const { failures, checked } = await applyDryRun(cp, objects, 'shop');
      expect(failures).toEqual([]);
      expect(checked).toBe(objects.length);
    },
  );
});

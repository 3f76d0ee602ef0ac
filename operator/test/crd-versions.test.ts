import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appCrd } from '../src/api/v1alpha1/crd.ts';
import { CRD_NAME, GROUP } from '../src/api/v1alpha1/groupversion.ts';
import { migrateStoredVersions } from '../src/crd-migrate.ts';
import { CRD_VERSION_ANNOTATION, OPERATOR_VERSION, upgradeCrd } from '../src/crd-upgrade.ts';
import { KubeClient } from '../src/runtime/kube-client.ts';
import { createNamespace, eventually, startClusterWithOperator } from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';

/*
 * The App API's versions on a real kube-apiserver: v1alpha1 and v1beta1 served side by side (one
 * schema, conversion None), the storage-version migration a platform team runs when a release moves
 * storage to v1beta1, and what the operator's CRD upgrade refuses to do (roll back a newer CRD, take
 * over one that no Gatehouse manifest installed, drop a version the cluster has stored).
 */
const NS = 'versions';
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;
const appPath = (version: string, name = '') =>
  `/apis/${GROUP}/${version}/namespaces/${NS}/apps${name ? `/${name}` : ''}`;

type Crd = {
  metadata: { annotations?: Record<string, string>; resourceVersion?: string };
  spec: { versions: { name: string; served: boolean; storage: boolean }[] };
  status?: { storedVersions?: string[] };
};
type Obj = {
  apiVersion: string;
  metadata: { name: string; resourceVersion: string; annotations?: Record<string, string> };
  spec: { plan: string; regions: { name: string }[] };
};

describe.runIf(controlPlaneAvailable())('App API versions on a real apiserver', () => {
  let cp: ControlPlane;
  let admin: KubeClient;
  let operator: KubeClient;
  const logger = pino({ level: 'silent' });
  const crd = () => admin.get<Crd>(CRD_PATH);
  const served = async (version: string) => {
    await eventually(`${version} served`, () => admin.list(appPath(version)).then(() => true));
  };

  beforeAll(async () => {
    ({ cp, admin } = await startClusterWithOperator());
    operator = new KubeClient(cp.kubeConfig('operator'));
    await createNamespace(admin, NS);
  }, 300_000);
  afterAll(async () => {
    await cp?.stop();
  }, 60_000);

  it('serves v1alpha1 and v1beta1 from one stored object: created in one, read and written in the other', async () => {
    const installed = await crd();
    expect(installed.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, true],
      ['v1beta1', true, false],
    ]);
    expect(installed.metadata.annotations?.[CRD_VERSION_ANNOTATION]).toBe(OPERATOR_VERSION);
    await served('v1beta1');
    const body = (version: string, name: string) => ({
      apiVersion: `${GROUP}/${version}`,
      kind: 'App',
      metadata: { name, namespace: NS },
      spec: appSpec({ regions: [region('eu')] }),
    });
    await admin.create(appPath('v1alpha1'), body('v1alpha1', 'alpha'));
    const read = await admin.get<Obj>(appPath('v1beta1', 'alpha'));
    expect(read.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(read.spec).toMatchObject({ plan: 'pro', regions: [{ name: 'eu' }] });
    // Written through v1beta1, read back through v1alpha1 (what the operator reads).
    await admin.mergePatch(appPath('v1beta1', 'alpha'), { spec: { plan: 'enterprise' } });
    expect((await admin.get<Obj>(appPath('v1alpha1', 'alpha'))).spec.plan).toBe('enterprise');
    // The same validation in both: an invalid spec is refused whichever version it comes through.
    const bad = body('v1beta1', 'bad');
    bad.spec.regions = [];
    await expect(admin.create(appPath('v1beta1'), bad)).rejects.toThrow(/regions/);
    await admin.create(appPath('v1beta1'), body('v1beta1', 'beta'));
    expect((await admin.get<Obj>(appPath('v1alpha1', 'beta'))).spec.regions[0]?.name).toBe('eu');
    expect((await crd()).status?.storedVersions).toEqual(['v1alpha1']);
  });

  it('the storage-version migration: storage moves to v1beta1, every App is rewritten, v1alpha1 leaves storedVersions', async () => {
    // What a later release's CRD does: the same versions, storage on v1beta1.
    await admin.apply(CRD_PATH, appCrd({ storageVersion: 'v1beta1' }), 'gatehouse-tests');
    await eventually('both versions recorded as stored', async () => {
      const stored = (await crd()).status?.storedVersions ?? [];
      return stored.includes('v1alpha1') && stored.includes('v1beta1') && stored;
    });
    // The apiserver answers "storage is (re)initializing" for a moment after a CRD change.
    const before = await eventually('Apps listed again', () => admin.list<Obj>(appPath('v1beta1')));
    expect(before.items.map((a) => a.metadata.name).sort()).toEqual(['alpha', 'beta']);
    const result = await migrateStoredVersions(admin, logger);
    expect(result).toEqual({ storageVersion: 'v1beta1', rewritten: 2, storedVersions: ['v1beta1'] });
    // Each object was written again (in the storage version), not skipped as unchanged.
    const after = await admin.list<Obj>(appPath('v1beta1'));
    for (const a of after.items) {
      const old = before.items.find((b) => b.metadata.name === a.metadata.name);
      expect(a.metadata.resourceVersion).not.toBe(old?.metadata.resourceVersion);
      expect(a.spec).toEqual(old?.spec);
    }
    expect((await crd()).status?.storedVersions).toEqual(['v1beta1']);
    // Run again, there is nothing to do.
    expect(await migrateStoredVersions(admin, logger)).toMatchObject({ rewritten: 0 });
    // Both versions still read the same Apps.
    expect((await admin.list<Obj>(appPath('v1alpha1'))).items).toHaveLength(2);
  });

  it('the operator never rolls back the storage version, even from a CRD whose annotation is older', async () => {
    // Storage is on v1beta1 now; this operator's CRD stores v1alpha1. An annotation saying "older"
    // (hand-edited, or an install that kept the old annotation) must not make it move storage back.
    await admin.mergePatch(CRD_PATH, { metadata: { annotations: { [CRD_VERSION_ANNOTATION]: '0.0.1' } } });
    const rv = (await crd()).metadata.resourceVersion;
    expect(await upgradeCrd(operator, logger)).toBe('refused');
    const now = await crd();
    expect(now.metadata.resourceVersion).toBe(rv);
    expect(now.spec.versions.find((v) => v.storage)?.name).toBe('v1beta1');
  });

  it('leaves a newer CRD alone, and a CRD no Gatehouse manifest installed (no version annotation)', async () => {
    await admin.apply(CRD_PATH, appCrd(), 'gatehouse-tests');
    await admin.mergePatch(CRD_PATH, { metadata: { annotations: { [CRD_VERSION_ANNOTATION]: '99.0.0' } } });
    let rv = (await crd()).metadata.resourceVersion;
    expect(await upgradeCrd(operator, logger)).toBe('newer');
    expect((await crd()).metadata.resourceVersion).toBe(rv);
    // Someone else's CRD under the same name (or an install from before the annotation): not taken over.
    await admin.mergePatch(CRD_PATH, { metadata: { annotations: { [CRD_VERSION_ANNOTATION]: null } } });
    rv = (await crd()).metadata.resourceVersion;
    expect(await upgradeCrd(operator, logger)).toBe('foreign');
    expect((await crd()).metadata.resourceVersion).toBe(rv);
    // Its own, older: upgraded.
    await admin.mergePatch(CRD_PATH, { metadata: { annotations: { [CRD_VERSION_ANNOTATION]: '0.0.1' } } });
    expect(await upgradeCrd(operator, logger)).toBe('applied');
    expect((await crd()).metadata.annotations?.[CRD_VERSION_ANNOTATION]).toBe(OPERATOR_VERSION);
    expect(await upgradeCrd(operator, logger)).toBe('current');
  });
});

import { describe, expect, it } from 'vitest';
import { appCrd } from './api/v1alpha1/crd.ts';
import { compareApiVersions, compareVersions, downgradeOf } from './crd-upgrade.ts';

describe('compareVersions (which CRD is newer)', () => {
  it('orders dotted numeric versions by number, not as text', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBe(1);
    expect(compareVersions('0.1.0', '0.1.0')).toBe(0);
    expect(compareVersions('0.1', '0.1.0')).toBe(0);
    expect(compareVersions('1.0.0', '99.0.0')).toBe(-1);
    expect(compareVersions('1.2.3-rc.1', '1.2.3')).toBe(0);
  });
});

describe('compareApiVersions (Kubernetes version order)', () => {
  it('orders alpha < beta < GA within a major, and majors by number', () => {
    const sorted = ['v2', 'v1', 'v1beta2', 'v1alpha1', 'v2alpha1', 'v1beta1', 'v1alpha2'].sort(
      compareApiVersions,
    );
    expect(sorted).toEqual(['v1alpha1', 'v1alpha2', 'v1beta1', 'v1beta2', 'v1', 'v2alpha1', 'v2']);
    expect(compareApiVersions('v1beta1', 'v1beta1')).toBe(0);
    expect(compareApiVersions('nonsense', 'v9')).toBe(1);
  });
});

describe('downgradeOf (what applying our CRD would take away)', () => {
  const installed = (versions: [string, boolean][], storedVersions = ['v1alpha1']) => ({
    metadata: {},
    spec: { versions: versions.map(([name, storage]) => ({ name, storage })) },
    status: { storedVersions },
  });

  it('nothing, over the same versions or older ones', () => {
    expect(downgradeOf(installed([['v1alpha1', true]]))).toBeUndefined();
    expect(
      downgradeOf(
        installed([
          ['v1alpha1', true],
          ['v1beta1', false],
        ]),
      ),
    ).toBeUndefined();
  });

  it('a version ours does not serve, one etcd still holds, or a later storage version', () => {
    expect(downgradeOf(installed([['v1', true]], ['v1']))).toMatch(/serves v1,/);
    expect(downgradeOf(installed([['v1alpha1', true]], ['v1alpha1', 'v1']))).toMatch(
      /etcd holds Apps in v1,/,
    );
    expect(
      downgradeOf(
        installed(
          [
            ['v1alpha1', false],
            ['v1beta1', true],
          ],
          ['v1beta1'],
        ),
      ),
    ).toMatch(/stores v1beta1, later than this operator's v1alpha1/);
    // A release that moves storage forward may upgrade a CRD that stores the older version.
    expect(
      downgradeOf(
        installed([
          ['v1alpha1', true],
          ['v1beta1', false],
        ]),
        appCrd({ storageVersion: 'v1beta1' }),
      ),
    ).toBeUndefined();
  });
});

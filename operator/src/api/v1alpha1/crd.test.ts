import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appCrd,
  CRD_FILE,
  CRD_VERSION_ANNOTATION,
  GENERATED_HEADER,
  OPERATOR_VERSION,
  renderCrdYaml,
} from './crd.ts';

const operatorDir = join(import.meta.dirname, '..', '..', '..');

describe('the App CRD', () => {
  it('committed YAML is exactly what the generator writes (run `npm run -w @gatehouse/operator generate`)', () => {
    const committed = readFileSync(join(operatorDir, CRD_FILE), 'utf8');
    expect(committed.startsWith(GENERATED_HEADER)).toBe(true);
    expect(committed).toBe(renderCrdYaml());
  });

  it('has a status subresource, printer columns and the validation rules the API promises', () => {
    const version = appCrd().spec.versions[0];
    expect(version?.subresources).toEqual({ status: {} });
    expect(version?.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'App Key',
      'Plan',
      'Ready',
      'Standby',
      'Reason',
      'Regions',
      'Age',
    ]);
    const yaml = renderCrdYaml();
    for (const rule of [
      "self.all(h, h.startsWith('bypass.'))",
      "self.all(h, h.startsWith('fallbackapiv1.'))",
      'credentialsSecretRef is immutable',
      'a host name may belong to one region only',
      'size(self.metadata.name) <= 30',
    ]) {
      expect(yaml).toContain(rule);
    }
    // biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON schema by hand.
    const spec = version?.schema.openAPIV3Schema.properties.spec as any;
    expect(spec.properties.regions).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      minItems: 1,
    });
    expect(spec.properties.regions.items.properties.hosts.properties.bypass).toMatchObject({
      minItems: 2,
      maxItems: 2,
    });
  });

  it('serves v1alpha1 and v1beta1 with one schema (conversion None), stores v1alpha1, and carries its version', () => {
    const crd = appCrd();
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, true],
      ['v1beta1', true, false],
    ]);
    const [alpha, beta] = crd.spec.versions;
    expect(JSON.stringify(beta?.schema)).toBe(JSON.stringify(alpha?.schema));
    expect(beta?.additionalPrinterColumns).toEqual(alpha?.additionalPrinterColumns);
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
    expect(crd.metadata.annotations[CRD_VERSION_ANNOTATION]).toBe(OPERATOR_VERSION);
    expect(
      appCrd({ storageVersion: 'v1beta1' })
        .spec.versions.filter((v) => v.storage)
        .map((v) => v.name),
    ).toEqual(['v1beta1']);
  });
});

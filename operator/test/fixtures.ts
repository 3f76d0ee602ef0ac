import type { App, AppSpec, RegionSpec } from '../src/api/v1alpha1/app-types.ts';
import { API_VERSION, KIND } from '../src/api/v1alpha1/groupversion.ts';

/** A region named `name` with hosts under `<name>.shop.example`. */
export function region(name: string, extra: Partial<RegionSpec> = {}): RegionSpec {
  const domain = `${name}.shop.example`;
  return {
    name,
    replicas: 2,
    hosts: {
      api: `api.${domain}`,
      bypass: [`bypass.a.${domain}`, `bypass.b.${domain}`],
      fallback: [`fallbackapiv1.a.${domain}`, `fallbackapiv1.b.${domain}`],
    },
    ...extra,
  };
}

/** The spec as a user writes it (the apiserver fills the defaults). */
export function appSpec(extra: Partial<AppSpec> = {}): AppSpec {
  return {
    plan: 'pro',
    serverTokenRequired: false,
    testMode: false,
    disabled: false,
    allowedDomains: ['shop.example'],
    regions: [region('eu', { locality: 'europe-west1' }), region('us', { locality: 'us-east1' })],
    ...extra,
  };
}

/** An App as the apiserver would hand it to the controller. */
export function makeApp(extra: Partial<AppSpec> = {}, name = 'shop', namespace = 'shop'): App {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name,
      namespace,
      uid: '6f1c1f2e-0000-4000-8000-000000000001',
      generation: 1,
      resourceVersion: '1',
    },
    spec: appSpec(extra),
  };
}

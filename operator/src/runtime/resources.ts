import { GROUP, KIND, PLURAL, VERSION } from '../api/v1alpha1/groupversion.ts';

/** What the REST paths of one kind need: group ('' for core), version, plural, kind. */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

export const APPS: ResourceType = { group: GROUP, version: VERSION, plural: PLURAL, kind: KIND };
export const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
};
export const SERVICES: ResourceType = { group: '', version: 'v1', plural: 'services', kind: 'Service' };
export const PODS: ResourceType = { group: '', version: 'v1', plural: 'pods', kind: 'Pod' };
export const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret' };
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', kind: 'Event' };
export const PDBS: ResourceType = {
  group: 'policy',
  version: 'v1',
  plural: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
};
export const INGRESSES: ResourceType = {
  group: 'networking.k8s.io',
  version: 'v1',
  plural: 'ingresses',
  kind: 'Ingress',
};
export const NETWORK_POLICIES: ResourceType = {
  group: 'networking.k8s.io',
  version: 'v1',
  plural: 'networkpolicies',
  kind: 'NetworkPolicy',
};
export const HPAS: ResourceType = {
  group: 'autoscaling',
  version: 'v2',
  plural: 'horizontalpodautoscalers',
  kind: 'HorizontalPodAutoscaler',
};
export const ENDPOINT_SLICES: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  kind: 'EndpointSlice',
};
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
};

export const apiVersionOf = (t: ResourceType) => (t.group ? `${t.group}/${t.version}` : t.version);

/** `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]`; no namespace: all namespaces. */
export function resourcePath(
  t: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  if (namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${t.plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (name && subresource) path += `/${subresource}`;
  return path;
}

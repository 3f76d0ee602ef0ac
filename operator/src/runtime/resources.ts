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

/**
 * The resource a REST path names, for metrics: the plural, with the subresource after a slash
 * (`apps/status`); `other` for paths outside the resource layout (discovery, /version).
 */
export function resourceOfPath(path: string): string {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : undefined;
  if (!rest?.length) return 'other';
  const scoped = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [plural, , subresource] = scoped;
  return subresource ? `${plural}/${subresource}` : (plural ?? 'other');
}

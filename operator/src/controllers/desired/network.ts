import type { App, RegionSpec } from '../../api/v1alpha1/app-types.ts';
import {
  childMetadata,
  INTERNAL_PORTS,
  ingressName,
  LABEL,
  networkPolicyName,
  type Role,
  selectorLabels,
  workloadName,
} from '../names.ts';
import type { BuildDefaults } from './deployment.ts';

/** A ClusterIP Service per workload, port 80 to the container's `http` port. */
export function buildService(app: App, region: RegionSpec, role: Role) {
  const name = workloadName(app, region.name, role);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMetadata(app, name, region.name, role),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(app, region.name, role),
      ports: [
        { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
        { name: 'internal', port: INTERNAL_PORTS[role], targetPort: 'internal', protocol: 'TCP' },
      ],
    },
  };
}

/**
 * Host routing: one Ingress per region with one rule per public host (the API host to the API
 * Service, both `bypass.` hosts to the bypass Service, both `fallbackapiv1.` hosts to the fallback
 * Service). One object per region rather than per host keeps TLS in one place; two hosts per standby
 * role exist for clients, which try both (replicas spread across nodes back them).
 */
export function buildIngress(app: App, region: RegionSpec) {
  const rule = (host: string, role: Role) => ({
    host,
    http: {
      paths: [
        {
          path: '/',
          pathType: 'Prefix',
          backend: { service: { name: workloadName(app, region.name, role), port: { name: 'http' } } },
        },
      ],
    },
  });
  const { api, bypass, fallback } = region.hosts;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: childMetadata(app, ingressName(app, region.name), region.name),
    spec: {
      ...(app.spec.ingressClassName ? { ingressClassName: app.spec.ingressClassName } : {}),
      ...(region.tlsSecretName
        ? { tls: [{ hosts: [api, ...bypass, ...fallback], secretName: region.tlsSecretName }] }
        : {}),
      rules: [
        rule(api, 'api'),
        ...bypass.map((h) => rule(h, 'bypass')),
        ...fallback.map((h) => rule(h, 'fallback')),
      ],
    },
  };
}

/** At most one pod of a workload down for voluntary disruptions (drains, upgrades). */
export function buildPdb(app: App, region: RegionSpec, role: Role) {
  const name = workloadName(app, region.name, role);
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMetadata(app, name, region.name, role),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: selectorLabels(app, region.name, role) },
    },
  };
}

/**
 * A region's NetworkPolicies. The public port (`http`) stays open to all (the Ingress controller, the
 * SDKs in-cluster); the internal port is open only to those who need it: the API's (snapshot, metrics)
 * to the region's standby pods of this App and to namespaces labelled `gatehouse.dev/metrics-scraper:
 * "true"` (Prometheus); the standby's (POST /internal/v1/mode) to the operator's namespace. They take
 * effect where the cluster's network plugin enforces NetworkPolicies.
 */
export function buildNetworkPolicies(app: App, region: RegionSpec, defaults: BuildDefaults) {
  const base = { [LABEL.app]: app.metadata.name, [LABEL.region]: region.name };
  const scrapers = { namespaceSelector: { matchLabels: { 'gatehouse.dev/metrics-scraper': 'true' } } };
  const operator = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': defaults.operatorNamespace } },
  };
  const standbyPods = {
    podSelector: {
      matchLabels: base,
      matchExpressions: [{ key: LABEL.component, operator: 'In', values: ['bypass', 'fallback'] }],
    },
  };
  const policy = (of: 'api' | 'standby', podSelector: object, internal: object[]) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: childMetadata(app, networkPolicyName(app, region.name, of), region.name),
    spec: {
      podSelector,
      policyTypes: ['Ingress'],
      ingress: [
        { ports: [{ port: 'http', protocol: 'TCP' }] },
        { from: internal, ports: [{ port: 'internal', protocol: 'TCP' }] },
      ],
    },
  });
  return [
    policy('api', { matchLabels: selectorLabels(app, region.name, 'api') }, [standbyPods, scrapers]),
    policy('standby', standbyPods.podSelector, [operator]),
  ];
}

import type { App, RegionSpec } from '../../api/v1alpha1/app-types.ts';
import { childMetadata, ingressName, type Role, selectorLabels, workloadName } from '../names.ts';

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
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
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

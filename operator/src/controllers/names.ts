import type { App } from '../api/v1alpha1/app-types.ts';
import { API_VERSION, KIND } from '../api/v1alpha1/groupversion.ts';

/** The three workloads of a region: the main API and the two standby roles. */
export type Role = 'api' | 'bypass' | 'fallback';
export const ROLES: readonly Role[] = ['api', 'bypass', 'fallback'];
/** Container ports: the API's PORT and the standby's STANDBY_BYPASS_PORT / STANDBY_FALLBACK_PORT defaults. */
export const CONTAINER_PORTS: Record<Role, number> = { api: 8080, bypass: 8081, fallback: 8082 };
/**
 * The internal port of each role (INTERNAL_PORT / STANDBY_INTERNAL_PORT): the API's /metrics and standby
 * snapshot, the standby's /internal/v1/mode. Services carry it by name, no Ingress routes it, and the
 * region's NetworkPolicies admit only the standby (to the API's) and the operator (to the standby's).
 */
export const INTERNAL_PORTS: Record<Role, number> = { api: 9090, bypass: 9091, fallback: 9092 };

export const LABEL = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  partOf: 'app.kubernetes.io/part-of',
  managedBy: 'app.kubernetes.io/managed-by',
  /** Which App an object belongs to (also the instance label; kept separate so selectors read plainly). */
  app: 'gatehouse.dev/app',
  region: 'gatehouse.dev/region',
} as const;
export const MANAGED_BY = 'gatehouse-operator';

/** `<app>-<region>-<role>`: at most 30 + 1 + 20 + 9 = 60 characters, a valid DNS label (the CRD checks the parts). */
export const workloadName = (app: App, region: string, role: Role) =>
  `${app.metadata.name}-${region}-${role}`;
export const ingressName = (app: App, region: string) => `${app.metadata.name}-${region}`;
/** The NetworkPolicy of a region's API pods, and of its standby pods (both roles). */
export const networkPolicyName = (app: App, region: string, of: 'api' | 'standby') =>
  `${app.metadata.name}-${region}-${of}`;
export const credentialsSecretName = (app: App) =>
  app.spec.credentialsSecretRef?.name ?? `${app.metadata.name}-credentials`;
/** What the app is called in the service's database. */
export const displayName = (app: App) =>
  (app.spec.displayName ?? `${app.metadata.namespace}/${app.metadata.name}`).slice(0, 100);

/** Labels a workload's pods are selected by: never change them (Deployment selectors are immutable). */
export function selectorLabels(app: App, region: string, role: Role): Record<string, string> {
  return { [LABEL.app]: app.metadata.name, [LABEL.region]: region, [LABEL.component]: role };
}

export function objectLabels(app: App, region?: string, role?: Role): Record<string, string> {
  return {
    [LABEL.name]: 'gatehouse',
    [LABEL.instance]: app.metadata.name,
    [LABEL.partOf]: 'gatehouse',
    [LABEL.managedBy]: MANAGED_BY,
    [LABEL.app]: app.metadata.name,
    ...(region ? { [LABEL.region]: region } : {}),
    ...(role ? { [LABEL.component]: role } : {}),
  };
}

/** Label selector of everything the operator made for one App (for clean-up of removed regions). */
export const ownedSelector = (app: App) =>
  `${LABEL.managedBy}=${MANAGED_BY},${LABEL.app}=${app.metadata.name}`;

/** The controller reference that lets kube-controller-manager's garbage collector delete children with the App. */
export function ownerReference(app: App) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: app.metadata.name,
    uid: app.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function childMetadata(app: App, name: string, region?: string, role?: Role) {
  return {
    name,
    namespace: app.metadata.namespace,
    labels: objectLabels(app, region, role),
    ownerReferences: [ownerReference(app)],
  };
}

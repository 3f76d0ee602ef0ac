import type { App, RegionSpec } from '../../api/v1alpha1/app-types.ts';
import {
  CONTAINER_PORTS,
  childMetadata,
  INTERNAL_PORTS,
  type Role,
  selectorLabels,
  workloadName,
} from '../names.ts';

/** What the spec leaves to the operator's flags. */
export interface BuildDefaults {
  images: { api: string; standby: string };
  /** Secret whose keys become the API's environment (DATABASE_URL, GATEHOUSE_TOKEN_KEY...). */
  runtimeSecret: string;
  /** TRUSTED_PROXIES of every pod (the operator's --trusted-proxies); an App's spec.trustedProxies wins. */
  trustedProxies: string;
  /** The operator's own namespace: the only one the NetworkPolicies let reach the standby's internal port. */
  operatorNamespace: string;
}

type EnvVar = { name: string; value?: string; valueFrom?: unknown };
/** The images' data folder (owned by their `node` user, uid 1000); an emptyDir here, the root filesystem is read-only. */
const DATA_DIR = '/data';

/**
 * The API's drain after SIGTERM (SHUTDOWN_DRAIN_MS, api/src/server.ts): long enough for the Services to
 * drop a terminating pod on every node (kube-proxy applies endpoint changes within about a second), short
 * enough that a deleted pod is gone within a few seconds, far inside its 30 s grace period.
 */
export const API_SHUTDOWN_DRAIN_MS = 2000;

export const urlsOf = (hosts: readonly string[]) => hosts.map((h) => `https://${h}`);

/** In-cluster URL of a region's main API Service (what the standby fetches its snapshot from). */
export const serviceUrl = (app: App, region: string, role: Role) =>
  `http://${workloadName(app, region, role)}.${app.metadata.namespace}.svc`;

/**
 * Clients reach every pod through the Ingress controller and the Service, so the addresses they forward
 * from are the proxies to trust; the client's own X-Forwarded-For entries never are (TRUST_PROXY, which
 * believes the leftmost entry, is never set).
 */
const trustedProxies = (app: App, defaults: BuildDefaults): EnvVar => ({
  name: 'TRUSTED_PROXIES',
  value: app.spec.trustedProxies ?? defaults.trustedProxies,
});

function apiEnv(app: App, region: RegionSpec, defaults: BuildDefaults): EnvVar[] {
  const env: EnvVar[] = [
    { name: 'HOST', value: '0.0.0.0' },
    { name: 'PORT', value: String(CONTAINER_PORTS.api) },
    { name: 'INTERNAL_PORT', value: String(INTERNAL_PORTS.api) },
    trustedProxies(app, defaults),
    { name: 'DATA_DIR', value: DATA_DIR },
    { name: 'GATEHOUSE_REGION', value: region.name },
    { name: 'GATEHOUSE_DB_REGION', value: region.locality ?? region.name },
    { name: 'STANDBY_BYPASS_URLS', value: urlsOf(region.hosts.bypass).join(',') },
    { name: 'STANDBY_FALLBACK_URLS', value: urlsOf(region.hosts.fallback).join(',') },
    { name: 'SHUTDOWN_DRAIN_MS', value: String(API_SHUTDOWN_DRAIN_MS) },
  ];
  const db = region.databaseSecretRef;
  if (db) env.push({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: db.name, key: db.key } } });
  // The API marks offline_ tokens used in the same store as its region's standby (consumption is shared).
  const store = region.standbyStoreSecretRef;
  if (store)
    env.push({
      name: 'STANDBY_STORE_URL',
      valueFrom: { secretKeyRef: { name: store.name, key: store.key } },
    });
  return env;
}

/** The standby gets only the two secrets it uses, never DATABASE_URL (a standby host must not reach the database). */
function standbyEnv(
  app: App,
  region: RegionSpec,
  role: 'bypass' | 'fallback',
  defaults: BuildDefaults,
): EnvVar[] {
  const runtimeSecret = app.spec.runtimeSecretRef?.name ?? defaults.runtimeSecret;
  const fromRuntime = (name: string) => ({
    name,
    valueFrom: { secretKeyRef: { name: runtimeSecret, key: name, optional: true } },
  });
  return [
    { name: 'STANDBY_ROLE', value: role },
    { name: 'STANDBY_HOST', value: '0.0.0.0' },
    trustedProxies(app, defaults),
    { name: 'STANDBY_BYPASS_PORT', value: String(CONTAINER_PORTS.bypass) },
    { name: 'STANDBY_FALLBACK_PORT', value: String(CONTAINER_PORTS.fallback) },
    { name: 'STANDBY_INTERNAL_PORT', value: String(INTERNAL_PORTS[role]) },
    // The API's internal port: its snapshot is served there only (it answers /readyz there too).
    { name: 'MAIN_API_URL', value: `${serviceUrl(app, region.name, 'api')}:${INTERNAL_PORTS.api}` },
    // The widget files the bypass role serves too are public: copied from the API's public port.
    { name: 'STANDBY_WIDGET_SOURCE_URL', value: serviceUrl(app, region.name, 'api') },
    { name: 'STANDBY_DATA_DIR', value: DATA_DIR },
    { name: 'GATEHOUSE_REGION', value: region.name },
    region.standbyStoreSecretRef
      ? {
          name: 'STANDBY_STORE_URL',
          valueFrom: {
            secretKeyRef: { name: region.standbyStoreSecretRef.name, key: region.standbyStoreSecretRef.key },
          },
        }
      : fromRuntime('STANDBY_STORE_URL'),
    fromRuntime('STANDBY_SYNC_TOKEN'),
  ];
}

/**
 * A region's Deployment for one role: non-root, read-only root filesystem, no capabilities, probes on
 * /healthz (liveness) and /readyz (readiness), spread across nodes, surge-only rollouts (the API never
 * drops below its replica count during an update).
 */
export function buildDeployment(app: App, region: RegionSpec, role: Role, defaults: BuildDefaults) {
  const name = workloadName(app, region.name, role);
  const isApi = role === 'api';
  const selector = selectorLabels(app, region.name, role);
  const resources = isApi ? region.resources : region.standby?.resources;
  const container = {
    name: role,
    image: isApi
      ? (app.spec.images?.api ?? defaults.images.api)
      : (app.spec.images?.standby ?? defaults.images.standby),
    env: isApi ? apiEnv(app, region, defaults) : standbyEnv(app, region, role, defaults),
    ...(isApi
      ? { envFrom: [{ secretRef: { name: app.spec.runtimeSecretRef?.name ?? defaults.runtimeSecret } }] }
      : {}),
    ports: [
      { name: 'http', containerPort: CONTAINER_PORTS[role], protocol: 'TCP' },
      { name: 'internal', containerPort: INTERNAL_PORTS[role], protocol: 'TCP' },
    ],
    livenessProbe: {
      httpGet: { path: '/healthz', port: 'http' },
      initialDelaySeconds: 5,
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: '/readyz', port: 'http' },
      periodSeconds: 5,
      timeoutSeconds: 2,
      failureThreshold: 2,
    },
    ...(resources ? { resources } : {}),
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [
      { name: 'data', mountPath: DATA_DIR },
      { name: 'tmp', mountPath: '/tmp' },
    ],
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMetadata(app, name, region.name, role),
    spec: {
      replicas: isApi ? region.replicas : (region.standby?.replicas ?? 2),
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: { ...childMetadata(app, name, region.name, role).labels, ...selector } },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            fsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(region.nodeSelector ? { nodeSelector: region.nodeSelector } : {}),
          // Without a nodeSelector (which pins), prefer the nodes of the region's locality by their
          // well-known topology label: a cluster spanning regions keeps each region's pods at home.
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  preference: {
                    matchExpressions: [
                      {
                        key: 'topology.kubernetes.io/region',
                        operator: 'In',
                        values: [region.locality ?? region.name],
                      },
                    ],
                  },
                },
              ],
            },
          },
          // Zones first (a zone outage takes at most its share of the replicas), then nodes.
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'topology.kubernetes.io/zone',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: selector },
            },
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: selector },
            },
          ],
          containers: [container],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          ],
        },
      },
    },
  };
}

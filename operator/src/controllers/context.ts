import type { Logger } from 'pino';
import type { App } from '../api/v1alpha1/app-types.ts';
import type { MainApiProber } from '../health/prober.ts';
import type { StandbyMode, StandbySwitch } from '../health/standby-switch.ts';
import type { EventRecorder } from '../runtime/events.ts';
import type { KubeClient, KubeObject } from '../runtime/kube-client.ts';
import type { OperatorMetrics } from '../runtime/metrics.ts';
import type { ResourceType } from '../runtime/resources.ts';
import type { AdminClient } from './admin-client.ts';
import type { ConditionInput } from './conditions.ts';
import type { BuildDefaults } from './desired/index.ts';

/** A Deployment as far as status needs it. */
export interface ObservedDeployment {
  metadata: { name: string; generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** What the controller remembers between reconciles (lost on restart: each entry can be rebuilt). */
export interface ControllerMemory {
  /** Credentials registered but not yet stored in their Secret (the Secret write failed), by App uid. */
  pendingCredentials: Map<string, { appKey: string; appSecret: string }>;
  /**
   * Hash of the settings last confirmed with the admin API and when, by App uid. While it matches and
   * is fresh, reconciles leave the admin API alone (it may be the very API that is down); a restart
   * confirms once more.
   */
  verifiedSettings: Map<string, { hash: string; at: number }>;
  /** Last mode each region's standby acknowledged, by `<ns>/<app>/<region>`. */
  standbyModes: Map<string, { mode: StandbyMode; at: Date | undefined }>;
}

export interface ControllerDeps {
  client: KubeClient;
  admin: AdminClient;
  prober: MainApiProber;
  standby: StandbySwitch;
  recorder: EventRecorder;
  defaults: BuildDefaults;
  /** Owned Deployments from the informer cache, by `<ns>/<name>`. */
  deployment(key: string): ObservedDeployment | undefined;
  /** Every App the operator watches, from the informer cache (host claims across Apps). */
  apps(): App[];
  /** Namespaces where the operator may read Secrets (--secret-namespaces); undefined: its whole scope. */
  secretNamespaces: readonly string[] | undefined;
  /** Localities the database has (the operator's --database-regions); undefined: not checked. */
  databaseRegions: readonly string[] | undefined;
  /** Objects of one owned kind in a namespace, from the informer caches (labelled managed-by the operator). */
  owned(type: ResourceType, namespace: string): KubeObject[];
  /** One owned object from the informer caches; undefined when they do not hold it (yet). */
  live(type: ResourceType, namespace: string, name: string): KubeObject | undefined;
  memory: ControllerMemory;
  metrics: OperatorMetrics;
  logger: Logger;
  /** While a standby serves, the mode is sent again this often (pods restart, new pods start). */
  standbyReassertMs: number;
  /** Settings are confirmed with the admin API again after this long even when nothing changed. */
  registrationRefreshMs: number;
  /** A deleted App whose app could not be disabled in the service for this long is let go anyway. */
  cleanupTimeoutMs: number;
  /** lastProbeTime in status is refreshed at most this often (status is not a heartbeat). */
  probeStatusRefreshMs: number;
}

export interface RegionTraffic {
  /** `none`: the main API is down and no standby process acknowledged 'serve'. */
  serving: 'main' | 'standby' | 'none';
  since: Date | undefined;
  message: string;
}

/** One reconciliation's working state: a copy of the App and what the steps found. */
export class ReconcileContext {
  readonly app: App;
  readonly key: string;
  readonly log: Logger;
  /** Set by the registration step; undefined keeps the previous Registered condition. */
  registered: ConditionInput | undefined;
  appKey: string | undefined;
  readonly traffic = new Map<string, RegionTraffic>();
  /** What the pods of each unavailable Deployment say, by Deployment name (steps/pods.ts). */
  readonly podReasons = new Map<string, string>();
  /** A step that failed hard: later steps did not run. */
  error: { step: string; message: string } | undefined;
  /** The spec cannot be carried out as written (a Secret missing, a host taken...): why, for status. */
  invalid: string | undefined;
  /** A soft failure (e.g. the admin API is away): the other steps ran, retry with backoff. */
  retry: string | undefined;
  requeueAfterMs: number | undefined;

  constructor(app: App, logger: Logger) {
    this.app = structuredClone(app);
    this.key = `${app.metadata.namespace}/${app.metadata.name}`;
    this.log = logger.child({ app: this.key });
    this.appKey = app.status?.appKey;
  }

  requeueAfter(ms: number): void {
    this.requeueAfterMs = Math.min(this.requeueAfterMs ?? ms, ms);
  }
}

export type Step = (ctx: ReconcileContext, deps: ControllerDeps) => Promise<void>;

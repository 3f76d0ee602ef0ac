import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { App } from './api/v1alpha1/app-types.ts';
import { FIELD_MANAGER } from './api/v1alpha1/groupversion.ts';
import type { OperatorConfig } from './config.ts';
import { AdminClient } from './controllers/admin-client.ts';
import { AppController } from './controllers/app-controller.ts';
import type { ControllerDeps, ObservedDeployment } from './controllers/context.ts';
import { CHILD_TYPES } from './controllers/desired/index.ts';
import { LABEL, MANAGED_BY } from './controllers/names.ts';
import { ownedChange, ROLLOUT_BATCH_MS } from './controllers/owned-change.ts';
import { Reason } from './controllers/reasons.ts';
import { upgradeCrd } from './crd-upgrade.ts';
import { MainApiProber, type ProbeFn } from './health/prober.ts';
import { endpointSliceTargets, StandbySwitch, type StandbyTargets } from './health/standby-switch.ts';
import { sleep } from './runtime/backoff.ts';
import { ControllerRunner } from './runtime/controller-runner.ts';
import { KubeEventRecorder } from './runtime/events.ts';
import { type Endpoints, serveEndpoints } from './runtime/http-endpoints.ts';
import { Informer, keyOf, withoutManagedFields } from './runtime/informer.ts';
import { KubeClient, type KubeObject } from './runtime/kube-client.ts';
import { LeaderElector } from './runtime/leader-election.ts';
import { OperatorMetrics } from './runtime/metrics.ts';
import { kubernetesAuthorizer } from './runtime/metrics-auth.ts';
import { TokenBucket } from './runtime/rate-limit.ts';
import {
  APPS,
  DEPLOYMENTS,
  type ResourceType,
  resourceOfPath,
  resourcePath,
  SECRETS,
} from './runtime/resources.ts';

/** Kinds the operator creates and watches: the per-region children and the generated credentials Secret. */
const OWNED_TYPES = [...CHILD_TYPES, SECRETS];

export interface ManagerOptions {
  kubeConfig: KubeConfig;
  config: OperatorConfig;
  logger: Logger;
  /** Injectable for tests: how the main API is probed, and where a region's standby processes are. */
  probe?: ProbeFn;
  standbyTargets?: StandbyTargets;
  /**
   * The process's own metrics on /metrics (RSS, heap, GC, event-loop lag: prom-client's defaults), the
   * first warning before a memory limit. One per process: the operator's main sets it.
   */
  processMetrics?: boolean;
  timings?: Partial<{
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
    standbyReassertMs: number;
    probeStatusRefreshMs: number;
  }>;
}

type Deployment = ObservedDeployment & { metadata: { namespace?: string } };
/** Any object the operator made, as far as the informers need it. */
type Owned = KubeObject & {
  metadata?: { namespace?: string; ownerReferences?: { kind: string; name: string; uid?: string }[] };
};

/**
 * The operator process: probe and metrics endpoints at once; then, as leader (a Lease) or alone, the
 * informers, the App controller and the main-API prober. A replica that loses the lease stops its
 * controllers and becomes a candidate again; `stop()` releases the lease for a fast hand-over.
 */
export class Manager {
  readonly metrics: OperatorMetrics;
  readonly client: KubeClient;
  readonly #o: ManagerOptions;
  readonly #elector: LeaderElector | undefined;
  readonly #stop = new AbortController();
  #endpoints: Endpoints[] = [];
  #running: { stop(): Promise<void>; synced(): boolean } | undefined;
  #loop: Promise<void> | undefined;
  #release = true;
  readonly #renewDeadlineMs: number;

  constructor(options: ManagerOptions) {
    this.#o = options;
    this.metrics = new OperatorMetrics({ processMetrics: options.processMetrics });
    this.#renewDeadlineMs = options.timings?.renewDeadlineMs ?? 10_000;
    this.client = new KubeClient(options.kubeConfig, {
      onRequest: (verb, path) => this.metrics.kubeRequests.inc({ verb, resource: resourceOfPath(path) }),
    });
    const le = options.config.leaderElection;
    if (le.enabled) {
      const t = options.timings ?? {};
      this.#elector = new LeaderElector(this.client, {
        namespace: le.namespace,
        name: le.name,
        identity: le.identity,
        leaseDurationMs: t.leaseDurationMs ?? 15_000,
        renewDeadlineMs: t.renewDeadlineMs ?? 10_000,
        retryPeriodMs: t.retryPeriodMs ?? 2_000,
        logger: options.logger,
      });
    }
  }

  get identity(): string {
    return this.#o.config.leaderElection.identity;
  }
  get isLeader(): boolean {
    return this.#running !== undefined;
  }
  get healthUrl(): string | undefined {
    return this.#endpoints[0]?.url;
  }
  get metricsUrl(): string | undefined {
    return this.#endpoints[1]?.url;
  }

  async start(): Promise<void> {
    const { config } = this.#o;
    this.#endpoints = [
      await serveEndpoints(config.healthPort, config.bindAddress, {
        '/healthz': () => ({ ok: !this.#stop.signal.aborted }),
        '/readyz': () => ({
          ok: !this.#running || this.#running.synced(),
          detail: { leader: this.isLeader },
        }),
      }),
      await serveEndpoints(
        config.metricsPort,
        config.bindAddress,
        {
          '/metrics': async () => ({
            contentType: this.metrics.registry.contentType,
            body: await this.metrics.registry.metrics(),
          }),
        },
        {
          authorize:
            config.metricsAuth === 'kubernetes'
              ? kubernetesAuthorizer(this.client, { path: '/metrics', logger: this.#o.logger })
              : undefined,
        },
      ),
    ];
    this.#loop = this.#lead();
  }

  /** Stops everything; `releaseLease: false` leaves the Lease to expire (what a crash does, for tests). */
  async stop(options: { releaseLease?: boolean } = {}): Promise<void> {
    this.#release = options.releaseLease ?? true;
    this.#stop.abort();
    await this.#loop;
    await Promise.all(this.#endpoints.map((e) => e.close()));
  }

  async #lead(): Promise<void> {
    const signal = this.#stop.signal;
    if (!this.#elector) {
      if (this.#o.config.manageCrd) await upgradeCrd(this.client, this.#o.logger);
      const term = new AbortController();
      this.#running = this.#startControllers(term.signal);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      term.abort(new Error('operator stopping'));
      await this.#running.stop();
      this.#running = undefined;
      return;
    }
    while (!signal.aborted) {
      if (!(await this.#elector.acquire(signal))) break;
      this.metrics.leader.set(1);
      // Bounded: while it runs the lease is not renewed (the rest of the upgrade goes on in the background).
      if (this.#o.config.manageCrd)
        await Promise.race([upgradeCrd(this.client, this.#o.logger), sleep(this.#renewDeadlineMs / 2)]);
      // Everything this term does to the cluster, the admin API and the standby goes through clients
      // bound to `term`: aborting it cancels the calls in flight and refuses new ones, so a replica
      // that lost the lease stops acting at once rather than when its reconciles finish.
      const term = new AbortController();
      const running = this.#startControllers(term.signal);
      this.#running = running;
      const why = await this.#elector.holdUntilLost(signal);
      term.abort(new Error(why === 'stopped' ? 'operator stopping' : `leadership lost (${why})`));
      this.#running = undefined;
      this.metrics.leader.set(0);
      if (why !== 'stopped') this.metrics.leadershipLosses.inc({ why });
      await running.stop();
      if (signal.aborted && this.#release) await this.#elector.release();
    }
  }

  #startControllers(term: AbortSignal) {
    const { config, logger } = this.#o;
    // The Lease calls go through the unbound client: a busy term never starves its own renewals.
    const client = this.client.bound(term, new TokenBucket(config.kubeApi.qps, config.kubeApi.burst));
    const t = this.#o.timings ?? {};
    const ns = config.watchNamespace;
    const onRelist = (kind: string) => () => this.metrics.watchRelists.inc({ kind });
    const onReconnect = (kind: string) => () => this.metrics.watchReconnects.inc({ kind });
    const apps = new Informer<App>(client, {
      type: APPS,
      namespace: ns,
      logger,
      onRelist: onRelist('App'),
      onReconnect: onReconnect('App'),
      signal: term,
      transform: withoutManagedFields,
    });
    // Every kind the operator makes, not only Deployments: a deleted Service, PDB, Ingress or
    // credentials Secret enqueues its App at once and comes back within a reconcile, not at the resync.
    // Secrets only where the operator may read them (--secret-namespaces): one informer per namespace.
    const namespacesOf = (type: ResourceType) =>
      type === SECRETS && config.secretNamespaces ? config.secretNamespaces : [ns];
    const owned = OWNED_TYPES.flatMap((type) =>
      namespacesOf(type).map((namespace) => ({
        type,
        informer: new Informer<Owned>(client, {
          type,
          namespace,
          labelSelector: `${LABEL.managedBy}=${MANAGED_BY}`,
          logger,
          onRelist: onRelist(type.kind),
          onReconnect: onReconnect(type.kind),
          signal: term,
          transform: withoutManagedFields,
        }),
      })),
    );
    const deployments = owned.find((o) => o.type === DEPLOYMENTS)?.informer as Informer<Owned>;
    let runner: ControllerRunner | undefined;
    const enqueue = (key: string, source: string, afterMs = 0) => {
      if (!runner) return;
      this.metrics.triggers.inc({ source });
      runner.queue.addAfter(key, afterMs);
    };
    const prober = new MainApiProber(
      config.probe,
      (appKey, region, healthy) => {
        logger.info({ app: appKey, region, healthy }, 'main API verdict changed');
        // A switch to or from the standby waits on this reconcile: ahead of everything queued.
        if (!runner) return;
        this.metrics.triggers.inc({ source: 'probe' });
        runner.queue.addFirst(appKey);
      },
      { probe: this.#o.probe, onResult: (ok) => this.metrics.probes.inc({ result: ok ? 'ok' : 'fail' }) },
    );
    const deps: ControllerDeps = {
      client,
      admin: new AdminClient({ url: config.adminUrl, token: config.adminToken, signal: term }),
      prober,
      standby: new StandbySwitch({
        token: config.standbyToken,
        targets: this.#o.standbyTargets ?? endpointSliceTargets(client),
        signal: term,
      }),
      recorder: new KubeEventRecorder(client, FIELD_MANAGER, this.identity, logger),
      defaults: {
        images: config.images,
        runtimeSecret: config.runtimeSecret,
        trustedProxies: config.trustedProxies,
        operatorNamespace: config.leaderElection.namespace,
      },
      deployment: (key) => deployments.get(key) as Deployment | undefined,
      apps: () => apps.list(),
      databaseRegions: config.databaseRegions,
      owned: (type, namespace) =>
        owned
          .filter((o) => o.type.kind === type.kind)
          .flatMap((o) => o.informer.list())
          .filter((o) => o.metadata?.namespace === namespace),
      live: (type, namespace, name) => {
        for (const o of owned) {
          const hit = o.type.kind === type.kind ? o.informer.get(`${namespace}/${name}`) : undefined;
          if (hit) return hit;
        }
        return undefined;
      },
      secretNamespaces: config.secretNamespaces,
      memory: { pendingCredentials: new Map(), verifiedSettings: new Map(), standbyModes: new Map() },
      metrics: this.metrics,
      logger,
      standbyReassertMs: t.standbyReassertMs ?? 30_000,
      probeStatusRefreshMs: t.probeStatusRefreshMs ?? 60_000,
      registrationRefreshMs: config.resyncMs,
      cleanupTimeoutMs: config.cleanupTimeoutMs,
    };
    const controller = new AppController(deps, (key) => {
      const [namespace, name] = key.split('/');
      return client.getOrNull<App>(resourcePath(APPS, namespace, name));
    });
    runner = new ControllerRunner(controller, {
      name: 'app',
      concurrency: config.concurrency,
      resyncMs: config.resyncMs,
      keys: () => apps.list().map(keyOf),
      logger,
      metrics: this.metrics,
    });
    apps.on({
      add: (a) => enqueue(keyOf(a), 'app'),
      update: (old, a) => {
        const changed =
          old.metadata.generation !== a.metadata.generation ||
          old.metadata.deletionTimestamp !== a.metadata.deletionTimestamp;
        const meta =
          JSON.stringify([old.metadata.finalizers, old.metadata.labels, old.metadata.annotations]) !==
          JSON.stringify([a.metadata.finalizers, a.metadata.labels, a.metadata.annotations]);
        if (changed || meta) enqueue(keyOf(a), 'app');
      },
      delete: (a) => {
        enqueue(keyOf(a), 'app');
        // An App refused for a host this one held may take it now.
        for (const other of apps.list())
          if (other.status?.conditions?.some((c) => c.reason === Reason.InvalidSpec))
            enqueue(keyOf(other), 'app');
      },
    });
    const ownerOf = (o: Owned) => o.metadata?.ownerReferences?.find((r) => r.kind === 'App');
    const onOwned = (kind: string, o: Owned, afterMs = 0) => {
      const app = ownerOf(o);
      if (app) enqueue(`${o.metadata?.namespace}/${app.name}`, `owned_${kind}`, afterMs);
    };
    const informers = [apps, ...owned.map((o) => o.informer)];
    for (const { type, informer } of owned)
      informer.on({
        add: (o) => onOwned(type.kind, o),
        // Status heartbeats of owned objects are no work: only what the reconcile reads or undoes.
        update: (old, o) => {
          const change = ownedChange(type.kind, old, o);
          if (change !== 'none') onOwned(type.kind, o, change === 'batched' ? ROLLOUT_BATCH_MS : 0);
        },
        delete: (o) => onOwned(type.kind, o),
      });
    for (const informer of informers) informer.start();
    const stopping = new AbortController();
    const aborted = new Promise<void>((resolve) =>
      stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    const synced = Promise.all(informers.map((i) => i.waitForSync())).then(() => {
      if (!stopping.signal.aborted) runner?.start();
    });
    return {
      synced: () => informers.every((i) => i.hasSynced),
      async stop() {
        stopping.abort();
        await Promise.race([synced, aborted]);
        await runner?.stop();
        prober.stop();
        await Promise.all(informers.map((i) => i.stop()));
      },
    };
  }
}

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The operator's Prometheus metrics, on a registry of their own (two managers in one test process must not collide). */
export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({
    name: 'gatehouse_operator_reconcile_total',
    help: 'Reconciliations by result (success, error, requeue).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly reconcileSeconds = new Histogram({
    name: 'gatehouse_operator_reconcile_duration_seconds',
    help: 'Time spent in one reconciliation.',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'gatehouse_operator_workqueue_depth',
    help: 'Keys waiting in the work queue.',
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'gatehouse_operator_workqueue_adds_total',
    help: 'Keys added to the work queue.',
    registers: [this.registry],
  });
  readonly triggers = new Counter({
    name: 'gatehouse_operator_reconcile_triggers_total',
    help: 'Why an App was queued: start, resync, requeue, retry, app (an App changed), probe (a verdict changed), owned_<kind> (an owned object changed).',
    labelNames: ['source'],
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'gatehouse_operator_workqueue_retries_total',
    help: 'Keys queued again after a failure (with backoff).',
    registers: [this.registry],
  });
  readonly watchRelists = new Counter({
    name: 'gatehouse_operator_watch_relists_total',
    help: 'Full lists by informers (start and 410 Gone).',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly watchReconnects = new Counter({
    name: 'gatehouse_operator_watch_reconnects_total',
    help: 'Watch reconnects after errors.',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'gatehouse_operator_leader',
    help: '1 while this replica holds the leader lease.',
    registers: [this.registry],
  });
  readonly leadershipLosses = new Counter({
    name: 'gatehouse_operator_leadership_lost_total',
    help: 'Times this replica stopped leading without being asked: renew deadline passed, or another holder took the lease.',
    labelNames: ['why'],
    registers: [this.registry],
  });
  readonly mainHealthy = new Gauge({
    name: 'gatehouse_operator_main_api_healthy',
    help: "1 while the operator's probes find a region's main API healthy (with hysteresis), 0 when down.",
    labelNames: ['namespace', 'app', 'region'],
    registers: [this.registry],
  });
  readonly standbyServing = new Gauge({
    name: 'gatehouse_operator_standby_serving',
    help: "1 while a region's standby has been told to serve.",
    labelNames: ['namespace', 'app', 'region'],
    registers: [this.registry],
  });
  readonly kubeRequests = new Counter({
    name: 'gatehouse_operator_kube_requests_total',
    help: 'Requests sent to the apiserver, by verb (WATCH: a watch opened) and resource (plural[/subresource]).',
    labelNames: ['verb', 'resource'],
    registers: [this.registry],
  });
  readonly probes = new Counter({
    name: 'gatehouse_operator_probes_total',
    help: 'Probes of main APIs by result.',
    labelNames: ['result'],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }
}

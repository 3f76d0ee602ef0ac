import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Prometheus metrics, one registry per app instance so tests can build several side by side. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'HTTP request duration by route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    validations: new Counter({
      name: 'gatehouse_validations_total',
      help: 'Token validations that reached a verdict, by token kind and outcome.',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    }),
    challenges: new Counter({
      name: 'gatehouse_challenges_total',
      help: 'Challenge initializations by tier (degraded: quota exhausted, a dg_ token was issued).',
      labelNames: ['tier'] as const,
      registers: [registry],
    }),
    serverTokensIssued: new Counter({
      name: 'gatehouse_server_tokens_issued_total',
      help: 'Server tokens issued.',
      registers: [registry],
    }),
    offlineGenuineRefused: new Counter({
      name: 'gatehouse_offline_genuine_refused_total',
      help: 'offline_ tokens signed with a real standby key but refused (lifetime over the cap, revoked key, no recorded outage): a stolen key or a revoked standby.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'gatehouse_rate_limited_total',
      help: 'Requests refused by a rate limit, by limit.',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * A metric's labelled children, each made once and kept: prom-client hashes a labels object on every
 * observation otherwise. Bounded: past `max` distinct label sets (a client inventing methods,
 * say) the cache starts over rather than growing without end; the metric keeps its series either way.
 */
export function labelledChildren<C>(
  labels: (values: Record<string, string>) => C,
  max = 1000,
): (values: Record<string, string>) => C {
  const children = new Map<string, C>();
  return (values) => {
    const key = Object.values(values).join('\u0000');
    let child = children.get(key);
    if (!child) {
      if (children.size >= max) children.clear();
      child = labels(values);
      children.set(key, child);
    }
    return child;
  };
}

import { Counter, collectDefaultMetrics, type Metric, Registry } from 'prom-client';

/** Prometheus metrics, one registry per app instance so tests can build several side by side. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new LabelledHistogram({
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
 * observation otherwise (issue 14). Bounded: past `max` distinct label sets (a client inventing methods,
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

interface HistogramSeries {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative), by the bucket's index in the bounds. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface HistogramOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  buckets: readonly number[];
  registers: Registry[];
}

/**
 * A labelled histogram for the hot paths: a child's observation is a bucket search and three additions on
 * its own series. prom-client's Histogram checks the label names, hashes the labels object into a string
 * and looks the series up on every observation, even through a child made by `labels()` (issue 14: the
 * route histogram was ~2% of a validation's CPU). It registers with a prom-client registry as any metric
 * does, and `get()` and `getForPromString()` return what prom-client's own Histogram returns for the same
 * observations, so `/metrics` reads the same (metrics.test.ts compares the two expositions).
 */
export class LabelledHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #labelNames: readonly L[];
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, HistogramSeries>();

  constructor(options: HistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (made on first use), to observe into. */
  labels(values: Partial<Record<L, string>>): { observe(value: number): void } {
    for (const name of Object.keys(values)) {
      if (!this.#labelNames.includes(name as L)) {
        throw new Error(`Added label "${name}" is not included in initial labelset: ${this.#labelNames}`);
      }
    }
    const key = this.#labelNames.map((name) => values[name] ?? '\u0000').join('\u0001');
    let series = this.#series.get(key);
    if (!series) {
      series = {
        labels: { ...values } as Record<string, string>,
        counts: new Float64Array(this.#bounds.length),
        sum: 0,
        count: 0,
      };
      this.#series.set(key, series);
    }
    const found = series;
    const bounds = this.#bounds;
    return {
      observe(value: number) {
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
        found.sum += value;
        found.count += 1;
        // Above the last bound: counted in +Inf (the count) only, as prom-client does.
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]!) {
            found.counts[i]! += 1;
            break;
          }
        }
      },
    };
  }

  reset(): void {
    this.#series.clear();
  }

  /** prom-client's exposition shape: per series its cumulative buckets, +Inf, sum and count. */
  async getForPromString() {
    const bucket = `${this.name}_bucket`;
    const values: object[] = [];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push(pair({ le: this.#bounds[i]! }, cumulative, bucket, series.labels, null));
      }
      values.push(
        pair({ le: '+Inf' }, series.count, bucket, series.labels, null),
        pair({}, series.sum, `${this.name}_sum`, series.labels, undefined),
        pair({}, series.count, `${this.name}_count`, series.labels, undefined),
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's `get()`: the series' labels spread into each value's own. */
  async get() {
    const data = await this.getForPromString();
    const values = (data.values as ReturnType<typeof pair>[]).map(({ sharedLabels, labels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return { ...data, values };
  }
}

function pair(
  labels: Record<string, string | number>,
  value: number,
  metricName: string,
  sharedLabels: Record<string, string>,
  exemplar: null | undefined,
) {
  return { labels, sharedLabels, value, metricName, exemplar };
}

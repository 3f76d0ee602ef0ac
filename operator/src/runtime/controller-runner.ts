import type { Logger } from 'pino';
import type { BackoffOptions } from './backoff.ts';
import type { OperatorMetrics } from './metrics.ts';
import { WorkQueue } from './workqueue.ts';

export interface Reconciler {
  reconcile(key: string): Promise<{ requeueAfterMs?: number }>;
}

export interface RunnerOptions {
  name: string;
  concurrency: number;
  /** Every key from `keys()` is queued again this often (catches what no watch reported). */
  resyncMs: number;
  keys(): string[];
  backoff?: BackoffOptions;
  logger: Logger;
  metrics: OperatorMetrics;
}

/**
 * Runs a reconciler over a work queue: `concurrency` workers, one key at a time each (never the same
 * key twice at once), success forgets the key's backoff, failure retries it with backoff, a result's
 * `requeueAfterMs` comes back later, and a periodic resync queues every key.
 */
export class ControllerRunner {
  readonly queue: WorkQueue;
  readonly #reconciler: Reconciler;
  readonly #o: RunnerOptions;
  #workers: Promise<void>[] = [];
  #resync: NodeJS.Timeout | undefined;

  constructor(reconciler: Reconciler, options: RunnerOptions) {
    this.#reconciler = reconciler;
    this.#o = options;
    const { metrics } = options;
    this.queue = new WorkQueue(options.backoff ?? { baseMs: 250, maxMs: 60_000, jitter: 0.1 }, {
      onAdd: () => metrics.queueAdds.inc(),
      onRetry: () => metrics.queueRetries.inc(),
      onDepth: (depth) => metrics.queueDepth.set(depth),
    });
  }

  start(): void {
    const { triggers } = this.#o.metrics;
    for (const key of this.#o.keys()) {
      triggers.inc({ source: 'start' });
      this.queue.add(key);
    }
    this.#resync = setInterval(() => {
      for (const key of this.#o.keys()) {
        triggers.inc({ source: 'resync' });
        this.queue.add(key);
      }
    }, this.#o.resyncMs);
    this.#resync.unref();
    for (let i = 0; i < this.#o.concurrency; i++) this.#workers.push(this.#work());
  }

  /** Stops taking keys and waits for the reconciles in flight to finish. */
  async stop(): Promise<void> {
    clearInterval(this.#resync);
    this.queue.shutdown();
    await Promise.all(this.#workers);
    this.#workers = [];
  }

  async #work(): Promise<void> {
    const { metrics, logger } = this.#o;
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const timer = metrics.reconcileSeconds.startTimer();
      try {
        const result = await this.#reconciler.reconcile(key);
        this.queue.forget(key);
        if (result.requeueAfterMs !== undefined) {
          metrics.triggers.inc({ source: 'requeue' });
          this.queue.addAfter(key, result.requeueAfterMs);
        }
        metrics.reconciles.inc({ result: result.requeueAfterMs === undefined ? 'success' : 'requeue' });
      } catch (err) {
        metrics.reconciles.inc({ result: 'error' });
        metrics.triggers.inc({ source: 'retry' });
        this.queue.addRateLimited(key);
        logger.warn(
          { controller: this.#o.name, key, err: (err as Error).message, failures: this.queue.failures(key) },
          'reconcile failed: retrying with backoff',
        );
      } finally {
        timer();
        this.queue.done(key);
      }
    }
  }
}

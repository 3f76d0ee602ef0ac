import { type BackoffOptions, KeyedBackoff } from './backoff.ts';

export interface WorkQueueHooks {
  onAdd?(key: string): void;
  onRetry?(key: string, delayMs: number): void;
  onDepth?(depth: number): void;
}

/**
 * A keyed work queue with client-go's guarantees: a key waits in the queue at most once however often
 * it is added (dedupe), is never handed to two workers at once (a key added while being processed is
 * queued again when `done` is called), and backs off exponentially per key after failures.
 */
export class WorkQueue {
  readonly #queue: string[] = [];
  /** Keys that need processing: queued, or added again while processing. */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  /** Keys added with addFirst while being processed: they come back at the front. */
  readonly #urgent = new Set<string>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #backoff: KeyedBackoff;
  readonly #hooks: WorkQueueHooks;
  #shutDown = false;

  constructor(backoff: BackoffOptions, hooks: WorkQueueHooks = {}, random?: () => number) {
    this.#backoff = new KeyedBackoff(backoff, random);
    this.#hooks = hooks;
  }

  add(key: string): void {
    if (this.#shutDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#hooks.onAdd?.(key);
    if (this.#processing.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      waiter(key);
    } else {
      this.#queue.push(key);
      this.#hooks.onDepth?.(this.#queue.length);
    }
  }

  /**
   * Adds `key` ahead of every waiting key, or moves it there if it waits already; added while being
   * processed, it comes back first after `done`. For the work a traffic switch waits on, which must not
   * queue behind a fleet's resyncs.
   */
  addFirst(key: string): void {
    if (this.#shutDown) return;
    if (this.#processing.has(key)) {
      this.#urgent.add(key);
      this.add(key);
      return;
    }
    const at = this.#queue.indexOf(key);
    if (at < 0) this.add(key);
    else this.#queue.splice(at, 1);
    if (this.#dirty.has(key) && !this.#processing.has(key)) {
      if (this.#queue[this.#queue.length - 1] === key) this.#queue.pop();
      this.#queue.unshift(key);
    }
  }

  /** Adds `key` after `ms`; of several pending delays for one key, the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shutDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.#timers.set(key, { at, timer });
  }

  /** After a failure: adds `key` again once its own backoff has passed. */
  addRateLimited(key: string): void {
    const delay = this.#backoff.next(key);
    this.#hooks.onRetry?.(key, delay);
    this.addAfter(key, delay);
  }

  /** After a success: the key's next failure starts from the base delay again. */
  forget(key: string): void {
    this.#backoff.forget(key);
  }

  failures(key: string): number {
    return this.#backoff.failures(key);
  }

  /** The next key to process, waiting for one; `undefined` once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.#shutDown) return Promise.resolve(undefined);
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      this.#hooks.onDepth?.(this.#queue.length);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile, it goes back in the queue. */
  done(key: string): void {
    this.#processing.delete(key);
    const urgent = this.#urgent.delete(key);
    if (this.#dirty.has(key)) {
      this.#dirty.delete(key);
      if (urgent) this.addFirst(key);
      else this.add(key);
    }
  }

  get length(): number {
    return this.#queue.length;
  }

  shutdown(): void {
    this.#shutDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }
}

import type { Logger } from 'pino';
import { type BackoffOptions, backoffDelay, sleep } from './backoff.ts';
import { type HasMetadata, isGone, KubeApiError, type KubeClient, type WatchEvent } from './kube-client.ts';
import { type ResourceType, resourcePath } from './resources.ts';

export interface InformerHandlers<T> {
  add?(obj: T): void;
  update?(old: T, obj: T): void;
  delete?(obj: T): void;
}

export interface InformerOptions<T = unknown> {
  type: ResourceType;
  /** Unset: every namespace. */
  namespace?: string;
  labelSelector?: string;
  /** Delay between reconnects after errors (reset after a watch that worked). */
  backoff?: BackoffOptions;
  logger: Logger;
  /** Called on each relist (first list included) and each reconnect after an error: for metrics and tests. */
  onRelist?(): void;
  onReconnect?(error: unknown): void;
  /** Ends the informer too (a leadership term): its calls fail then, and that is no reason to reconnect. */
  signal?: AbortSignal;
  /** Applied to each object before it is cached and handed on (e.g. dropping fields nobody reads). */
  transform?(obj: T): T;
}

export type WatchSource = Pick<KubeClient, 'list' | 'watch'>;

/** `namespace/name`, the key of the cache and of the work queue. */
export const keyOf = (obj: HasMetadata) => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;

/**
 * A list-then-watch cache of one kind. It survives everything a watch can do: a closed connection
 * re-watches from the last resourceVersion seen (bookmarks included); 410 Gone (the version was
 * compacted away, as an HTTP status or an ERROR event) relists and reports the difference as events;
 * any other failure waits with exponential backoff and tries again, for as long as it runs.
 */
export class Informer<T extends HasMetadata> {
  readonly #store = new Map<string, T>();
  readonly #handlers: InformerHandlers<T>[] = [];
  readonly #source: WatchSource;
  readonly #options: InformerOptions<T>;
  readonly #stop = new AbortController();
  #resourceVersion = '';
  #synced = false;
  #syncedWaiters: (() => void)[] = [];
  #loop: Promise<void> | undefined;

  constructor(source: WatchSource, options: InformerOptions<T>) {
    this.#source = source;
    this.#options = options;
  }

  on(handlers: InformerHandlers<T>): this {
    this.#handlers.push(handlers);
    return this;
  }

  get(key: string): T | undefined {
    return this.#store.get(key);
  }
  list(): T[] {
    return [...this.#store.values()];
  }
  get hasSynced(): boolean {
    return this.#synced;
  }
  /** Resolves after the first complete list. */
  waitForSync(): Promise<void> {
    return this.#synced ? Promise.resolve() : new Promise((resolve) => this.#syncedWaiters.push(resolve));
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { type, namespace, labelSelector, logger } = this.#options;
    const backoff = this.#options.backoff ?? { baseMs: 200, maxMs: 30_000, jitter: 0.2 };
    const path = resourcePath(type, namespace);
    let needList = true;
    let failures = 0;
    while (!this.#stop.signal.aborted) {
      const attempt = new AbortController();
      const abort = () => attempt.abort();
      let stalled: NodeJS.Timeout | undefined;
      this.#stop.signal.addEventListener('abort', abort, { once: true });
      try {
        if (needList) {
          await this.#relist(path);
          needList = false;
        }
        const watchedAt = Date.now();
        const timeoutSeconds = 240 + Math.floor(Math.random() * 120);
        // The server ends a watch after timeoutSeconds; one that outlives it by a minute sits on a dead
        // connection (no FIN ever came): give it up and reconnect.
        stalled = setTimeout(() => attempt.abort(new Error('watch stalled')), (timeoutSeconds + 60) * 1000);
        stalled.unref();
        await this.#source.watch<T>(
          path,
          {
            resourceVersion: this.#resourceVersion,
            allowWatchBookmarks: true,
            labelSelector,
            timeoutSeconds,
          },
          (event) => {
            this.#apply(event);
            failures = 0;
          },
          attempt.signal,
        );
        // A watch the server ends at once, again and again (a proxy, an overloaded apiserver): back off.
        if (Date.now() - watchedAt < 1000) await sleep(backoffDelay(failures++, backoff), this.#stop.signal);
      } catch (err) {
        if (this.#stop.signal.aborted || this.#options.signal?.aborted) break;
        if (isGone(err)) {
          logger.info({ kind: type.kind }, 'watch expired (410 Gone): relisting');
          needList = true;
          continue;
        }
        failures += 1;
        this.#options.onReconnect?.(err);
        const delay = backoffDelay(failures - 1, backoff);
        logger.warn(
          { kind: type.kind, err: (err as Error).message, retryInMs: delay },
          'watch failed: reconnecting',
        );
        await sleep(delay, this.#stop.signal);
      } finally {
        clearTimeout(stalled);
        attempt.abort();
        this.#stop.signal.removeEventListener('abort', abort);
      }
    }
  }

  async #relist(path: string): Promise<void> {
    const { labelSelector } = this.#options;
    const fresh = new Map<string, T>();
    let page: string | undefined;
    do {
      const list = await this.#source.list<T>(path, { labelSelector, limit: 500, continue: page });
      for (const item of list.items) fresh.set(keyOf(item), this.#options.transform?.(item) ?? item);
      page = list.metadata.continue || undefined;
      this.#resourceVersion = list.metadata.resourceVersion;
    } while (page);
    this.#options.onRelist?.();
    for (const [key, old] of this.#store) {
      if (!fresh.has(key)) {
        this.#store.delete(key);
        this.#emit('delete', old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = this.#store.get(key);
      this.#store.set(key, obj);
      if (!old) this.#emit('add', obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.#emit('update', obj, old);
    }
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncedWaiters.splice(0)) resolve();
    }
  }

  #apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') {
      const status = event.object as unknown as { code?: number; reason?: string; message?: string };
      throw new KubeApiError(status.code ?? 500, status.reason ?? '', status.message ?? 'watch error');
    }
    const rv = event.object.metadata?.resourceVersion;
    if (rv) this.#resourceVersion = rv;
    if (event.type === 'BOOKMARK') return;
    const object = this.#options.transform?.(event.object) ?? event.object;
    const key = keyOf(object);
    const old = this.#store.get(key);
    if (event.type === 'DELETED') {
      this.#store.delete(key);
      this.#emit('delete', object);
    } else {
      this.#store.set(key, object);
      if (old) this.#emit('update', object, old);
      else this.#emit('add', object);
    }
  }

  #emit(kind: 'add' | 'update' | 'delete', obj: T, old?: T): void {
    for (const h of this.#handlers) {
      try {
        if (kind === 'add') h.add?.(obj);
        else if (kind === 'update') h.update?.(old as T, obj);
        else h.delete?.(obj);
      } catch (err) {
        this.#options.logger.error({ err: (err as Error).message }, 'informer handler failed');
      }
    }
  }
}

/**
 * Drops `metadata.managedFields` (a copy when there are any): the largest part of most objects, read by
 * no controller here, so the caches of a large fleet hold only what is used (controller-runtime's
 * advice for caches too).
 */
export function withoutManagedFields<T extends HasMetadata>(obj: T): T {
  const metadata = obj.metadata as (HasMetadata['metadata'] & { managedFields?: unknown }) | undefined;
  if (!metadata?.managedFields) return obj;
  const { managedFields: _, ...rest } = metadata;
  return { ...obj, metadata: rest };
}

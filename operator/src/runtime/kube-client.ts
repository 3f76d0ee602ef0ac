import type { AgentOptions } from 'node:https';
import { HttpMethod, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, type Dispatcher, fetch } from 'undici';
import type { TokenBucket } from './rate-limit.ts';

/**
 * Every request says who sends it: the apiserver names the field manager of a patch without one after
 * the User-Agent's product, and its audit log and priority-and-fairness rules match on it.
 */
export const USER_AGENT = 'gatehouse-operator';

/** An answer of the apiserver other than 2xx, with its HTTP status and `Status.reason`. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
  }
}

export const isNotFound = (err: unknown) => err instanceof KubeApiError && err.status === 404;
export const isConflict = (err: unknown) => err instanceof KubeApiError && err.status === 409;
export const isGone = (err: unknown) => err instanceof KubeApiError && err.status === 410;

export type Query = Record<string, string | number | boolean | undefined>;
/** Per-call options of the plain verbs: a signal that cancels this one call (e.g. a Lease call's deadline). */
export type CallOptions = { signal?: AbortSignal };
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
};
/** What the informer needs of an object: its name, namespace and version. */
export type HasMetadata = { metadata?: { name?: string; namespace?: string; resourceVersion?: string } };
export type KubeList<T> = { items: T[]; metadata: { resourceVersion: string; continue?: string } };
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: T };

const METHODS = {
  GET: HttpMethod.GET,
  POST: HttpMethod.POST,
  PUT: HttpMethod.PUT,
  PATCH: HttpMethod.PATCH,
  DELETE: HttpMethod.DELETE,
};
type Method = keyof typeof METHODS;

/**
 * A small REST client over @kubernetes/client-node's KubeConfig (its authentication and TLS): every
 * call names its content type, so server-side apply and merge patches are never sent as strategic merge.
 */
export class KubeClient {
  readonly #kc: KubeConfig;
  readonly #server: string;
  readonly #timeoutMs: number;
  /** client-node makes a new connection pool per request: one is made once and reused. */
  #dispatcher: Promise<Dispatcher | undefined> | undefined;
  /** A leadership term: once aborted, every call of this client (watches included) fails at once. */
  readonly #term: AbortSignal | undefined;
  /** Shared by the clients of one term: requests other than watches wait for a token. */
  readonly #limiter: TokenBucket | undefined;
  /** Called once per request sent (verb and path), for the requests-per-App figures. */
  readonly #onRequest: ((method: string, path: string) => void) | undefined;

  constructor(
    kc: KubeConfig,
    options: {
      timeoutMs?: number;
      term?: AbortSignal;
      limiter?: TokenBucket;
      onRequest?: (method: string, path: string) => void;
    } = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('The kubeconfig has no current cluster.');
    this.#kc = kc;
    this.#server = cluster.server.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#term = options.term;
    this.#limiter = options.limiter;
    this.#onRequest = options.onRequest;
  }

  /**
   * The same client bound to `term`: when it aborts, calls in flight are cancelled and new ones fail
   * without being sent. The controllers of one leadership term use such a client, so a replica that
   * lost the lease stops writing at once instead of finishing its reconciles.
   */
  bound(term: AbortSignal, limiter?: TokenBucket): KubeClient {
    const view = new KubeClient(this.#kc, {
      timeoutMs: this.#timeoutMs,
      term,
      limiter: limiter ?? this.#limiter,
      onRequest: this.#onRequest,
    });
    view.#dispatcher = this.#dispatcher;
    return view;
  }

  async request<T>(
    method: Method,
    path: string,
    options: { query?: Query; body?: unknown; contentType?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const res = await this.#fetch(
      method,
      path,
      options,
      options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    );
    const text = await res.text();
    if (!res.ok) throw toError(res.status, text);
    return (text ? JSON.parse(text) : {}) as T;
  }

  get<T>(path: string, query?: Query, call: CallOptions = {}) {
    return this.request<T>('GET', path, { query, ...call });
  }
  async getOrNull<T>(path: string, call: CallOptions = {}): Promise<T | null> {
    try {
      return await this.get<T>(path, undefined, call);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }
  list<T>(path: string, query?: Query) {
    return this.request<KubeList<T>>('GET', path, { query });
  }
  create<T>(path: string, body: unknown, call: CallOptions = {}) {
    return this.request<T>('POST', path, { body, ...call });
  }
  replace<T>(path: string, body: unknown, call: CallOptions = {}) {
    return this.request<T>('PUT', path, { body, ...call });
  }
  /** Server-side apply: the object path, a full intent, a field manager; `force` takes over conflicting fields. */
  apply<T>(path: string, body: KubeObject, fieldManager: string, force = true) {
    return this.request<T>('PATCH', path, {
      body,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager, force },
    });
  }
  mergePatch<T>(path: string, patch: unknown, fieldManager?: string) {
    return this.request<T>('PATCH', path, {
      body: patch,
      contentType: 'application/merge-patch+json',
      query: { fieldManager },
    });
  }
  /** Deletes; NotFound counts as done. */
  async delete(path: string, propagationPolicy: 'Background' | 'Foreground' | 'Orphan' = 'Background') {
    try {
      await this.request('DELETE', path, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * One watch connection: calls `onEvent` per event until the server ends the stream (resolves) or the
   * connection fails (rejects). An HTTP error, e.g. 410 Gone for a too old resourceVersion, rejects with
   * a KubeApiError; an ERROR event is passed on as is. Reconnecting is the informer's job.
   */
  async watch<T>(
    path: string,
    query: Query,
    onEvent: (event: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const res = await this.#fetch('GET', path, { query: { ...query, watch: true } }, signal);
    if (!res.ok || !res.body) throw toError(res.status, await res.text());
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body) {
      buffered += decoder.decode(chunk as Uint8Array, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) onEvent(JSON.parse(line) as WatchEvent<T>);
        newline = buffered.indexOf('\n');
      }
    }
  }

  async #fetch(
    method: Method,
    path: string,
    options: { query?: Query; body?: unknown; contentType?: string },
    signal: AbortSignal,
  ) {
    const cancel = this.#term ? AbortSignal.any([signal, this.#term]) : signal;
    cancel.throwIfAborted();
    if (this.#limiter && !options.query?.watch) await this.#limiter.take(cancel);
    this.#onRequest?.(options.query?.watch ? 'WATCH' : method, path);
    const url = new URL(this.#server + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const ctx = new RequestContext(url.toString(), METHODS[method]);
    await this.#kc.applySecurityAuthentication(ctx);
    const headers: Record<string, string> = {
      ...ctx.getHeaders(),
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
    };
    if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
    this.#dispatcher ??= this.#makeDispatcher(ctx);
    const dispatcher = await this.#dispatcher;
    return fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      ...(dispatcher ? { dispatcher } : {}),
      signal: cancel,
    });
  }

  /**
   * The kubeconfig's TLS settings on an HTTP/1.1 pool. undici 8 negotiates HTTP/2 by default, and its
   * idle-session reaper (8.12) destroys the socket with an error nothing listens to: an uncaught
   * exception that would end the operator. HTTP/1.1 is what client-node 1.x spoke to the apiserver.
   * Proxies (proxy-url in the kubeconfig) keep client-node's own dispatcher.
   */
  async #makeDispatcher(ctx: RequestContext): Promise<Dispatcher | undefined> {
    const agentOptions: AgentOptions = {};
    await this.#kc.applyToHTTPSOptions(agentOptions);
    const made = this.#kc.createDispatcherOptions(this.#kc.getCurrentCluster(), agentOptions);
    if (made.type === 'agent') return new Agent({ connect: made.connect, allowH2: false });
    if (made.type === 'none') return new Agent({ allowH2: false });
    return ctx.getDispatcher() as Dispatcher | undefined;
  }
}

function toError(status: number, text: string): KubeApiError {
  try {
    const body = JSON.parse(text) as { reason?: string; message?: string };
    return new KubeApiError(status, body.reason ?? '', body.message ?? text);
  } catch {
    return new KubeApiError(status, '', text.slice(0, 500) || `HTTP ${status}`);
  }
}

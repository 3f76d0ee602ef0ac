/** The settings the admin API takes (api/src/apps/settings.ts), as the operator sends them. */
export interface AppSettings {
  name: string;
  plan: 'free' | 'pro' | 'enterprise';
  monthly_quota: number | null;
  overage_allowed: boolean | null;
  server_token_required: boolean;
  test_mode: boolean;
  risk_policy: Record<string, unknown>;
  allowed_domains: string[];
  pass_token_ttl?: number;
  client_ip_policy?: 'report' | 'reject';
  /** The custom resource the app is declared by: the console shows such apps read-only. */
  managed_by: ManagedBy;
}

/** What declares an app (docs/console.md); the operator's apps are `{kind: "App", namespace, name}`. */
export type ManagedBy = { kind: string; namespace: string; name: string } | null;

/** An app as the admin API describes it (`describeApp`); quota and overage are the effective values. */
export interface RemoteApp {
  app_key: string;
  name: string;
  plan: string;
  monthly_quota: number;
  overage_allowed: boolean;
  server_token_required: boolean;
  test_mode: boolean;
  pass_token_ttl: number;
  client_ip_policy: string;
  risk_policy: Record<string, unknown>;
  allowed_domains: string[];
  /** Absent from a service older than `managed_by`. */
  managed_by?: ManagedBy;
  disabled: boolean;
}

/** A non-2xx answer or a transport failure; `status` 0 for the latter. The message never holds a secret. */
export class AdminApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'AdminApiError';
    this.status = status;
    this.code = code;
  }
}

export interface AdminClientOptions {
  url: string;
  token: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Cancels every call (the leadership term): a replica that lost the lease stops talking to the service. */
  signal?: AbortSignal;
}

/** Client of the main API's admin API (`/admin/v1/apps`), the operator's only way into the service's database. */
export class AdminClient {
  readonly #o: Required<Omit<AdminClientOptions, 'signal'>>;
  readonly #signal: AbortSignal | undefined;

  constructor(options: AdminClientOptions) {
    this.#signal = options.signal;
    this.#o = {
      timeoutMs: 10_000,
      fetch: globalThis.fetch,
      ...options,
      url: options.url.replace(/\/+$/, ''),
    };
  }

  create(settings: AppSettings) {
    return this.#call<RemoteApp & { app_secret: string }>('POST', '/admin/v1/apps', settings);
  }
  /** The app, or null when the service does not know the key. */
  async get(appKey: string): Promise<RemoteApp | null> {
    try {
      return await this.#call<RemoteApp>('GET', `/admin/v1/apps/${encodeURIComponent(appKey)}`);
    } catch (err) {
      if (err instanceof AdminApiError && err.status === 404) return null;
      throw err;
    }
  }
  update(appKey: string, patch: Partial<AppSettings>) {
    return this.#call<RemoteApp>('PATCH', `/admin/v1/apps/${encodeURIComponent(appKey)}`, patch);
  }
  setDisabled(appKey: string, disabled: boolean) {
    return this.#call<RemoteApp>(
      'POST',
      `/admin/v1/apps/${encodeURIComponent(appKey)}/${disabled ? 'disable' : 'enable'}`,
    );
  }
  /** A new secret; `graceSeconds` 0 ends the old one at once. */
  rotateSecret(appKey: string, graceSeconds = 0) {
    return this.#call<RemoteApp & { app_secret: string }>(
      'POST',
      `/admin/v1/apps/${encodeURIComponent(appKey)}/rotate-secret`,
      {
        grace_seconds: graceSeconds,
      },
    );
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await this.#o.fetch(this.#o.url + path, {
        method,
        headers: {
          Authorization: `Bearer ${this.#o.token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: this.#signal
          ? AbortSignal.any([this.#signal, AbortSignal.timeout(this.#o.timeoutMs)])
          : AbortSignal.timeout(this.#o.timeoutMs),
      });
    } catch (err) {
      // A cancelled term is not the admin API's fault: not a soft AdminApiError, the reconcile just ends.
      if (this.#signal?.aborted) throw this.#signal.reason;
      throw new AdminApiError(
        0,
        'unreachable',
        `admin API unreachable at ${this.#o.url}: ${(err as Error).message}`,
      );
    }
    const text = await res.text();
    let parsed: { code?: number; data?: T; error?: string; message?: string } = {};
    try {
      parsed = JSON.parse(text);
    } catch {}
    if (!res.ok || parsed.code !== 0) {
      const code = parsed.error ?? 'http_error';
      throw new AdminApiError(
        res.status,
        code,
        `admin API ${method} ${path}: ${res.status} ${code}${parsed.message ? ` (${parsed.message})` : ''}`,
      );
    }
    return parsed.data as T;
  }
}

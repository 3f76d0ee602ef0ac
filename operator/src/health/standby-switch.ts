import type { App } from '../api/v1alpha1/app-types.ts';
import { workloadName } from '../controllers/names.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import { ENDPOINT_SLICES, resourcePath } from '../runtime/resources.ts';

/** The standby's operator override (standby/src/main-health.ts): `serve`, `online`, or `auto` (its own probes). */
export type StandbyMode = 'auto' | 'serve' | 'online';

/** Base URLs of every standby process of a region, both roles. Injectable: tests point it at real processes. */
export type StandbyTargets = (app: App, region: string) => Promise<string[]>;

interface EndpointSlice {
  addressType: string;
  endpoints?: { addresses: string[]; conditions?: { terminating?: boolean } }[];
  ports?: { name?: string; port?: number }[];
}

/**
 * Every pod behind a region's bypass and fallback Services, from their EndpointSlices, ready or not: a
 * Service would reach one pod per request, and every pod must hear the mode. Terminating pods are left out.
 */
export function endpointSliceTargets(client: KubeClient): StandbyTargets {
  return async (app, region) => {
    const urls: string[] = [];
    for (const role of ['bypass', 'fallback'] as const) {
      const service = workloadName(app, region, role);
      const slices = await client.list<EndpointSlice>(resourcePath(ENDPOINT_SLICES, app.metadata.namespace), {
        labelSelector: `kubernetes.io/service-name=${service}`,
      });
      for (const slice of slices.items) {
        // The internal port (STANDBY_INTERNAL_PORT), where the mode endpoint lives; `http` for standby
        // pods made before the operator set one.
        const port = (
          slice.ports?.find((p) => p.name === 'internal') ?? slice.ports?.find((p) => p.name === 'http')
        )?.port;
        if (!port) continue;
        for (const endpoint of slice.endpoints ?? []) {
          if (endpoint.conditions?.terminating) continue;
          for (const address of endpoint.addresses) {
            urls.push(
              slice.addressType === 'IPv6' ? `http://[${address}]:${port}` : `http://${address}:${port}`,
            );
          }
        }
      }
    }
    return urls;
  };
}

export interface SwitchResult {
  total: number;
  acknowledged: number;
  /** Calls made: processes that acknowledged the same mode within `fresherThanMs` are not called again. */
  sent: number;
  errors: string[];
}

/** Tells standby processes which mode to be in: `POST <standby>/internal/v1/mode` with the sync token. */
export class StandbySwitch {
  /** What each process of a region last acknowledged, and when: by `<ns>/<app>/<region>`, then URL. */
  readonly #heard = new Map<string, Map<string, { mode: StandbyMode; at: number }>>();
  readonly #token: string | undefined;
  readonly #targets: StandbyTargets;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #signal: AbortSignal | undefined;

  constructor(options: {
    /** The standbys' sync credential (STANDBY_SYNC_TOKEN); unset, every switch fails without a call. */
    token: string | undefined;
    targets: StandbyTargets;
    timeoutMs?: number;
    fetch?: typeof fetch;
    /** Cancels every call (the leadership term). */
    signal?: AbortSignal;
  }) {
    this.#signal = options.signal;
    this.#token = options.token;
    this.#targets = options.targets;
    this.#timeoutMs = options.timeoutMs ?? 3000;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /**
   * Sends `mode` to every standby process of the region, in parallel; never throws. With
   * `fresherThanMs`, a process that acknowledged this same mode less than that long ago counts as
   * acknowledged without a call (a reconcile during an outage re-tells only new or forgetful pods).
   */
  async setMode(
    app: App,
    region: string,
    mode: StandbyMode,
    options: { fresherThanMs?: number } = {},
  ): Promise<SwitchResult> {
    let urls: string[];
    try {
      urls = await this.#targets(app, region);
    } catch (err) {
      return {
        total: 0,
        acknowledged: 0,
        sent: 0,
        errors: [`listing standby endpoints: ${(err as Error).message}`],
      };
    }
    // Without the sync credential every call would be a 401: say what is missing instead.
    if (!this.#token && urls.length) {
      const missing = 'no standby sync credential: set GATEHOUSE_STANDBY_SYNC_TOKEN (--standby-token)';
      return { total: urls.length, acknowledged: 0, sent: 0, errors: [missing] };
    }
    const regionKey = `${app.metadata.namespace}/${app.metadata.name}/${region}`;
    const before = this.#heard.get(regionKey);
    // Only the processes listed now are remembered: the map never outgrows the region's pods.
    const heard = new Map<string, { mode: StandbyMode; at: number }>();
    this.#heard.set(regionKey, heard);
    const now = Date.now();
    const fresh = (url: string) => {
      const last = before?.get(url);
      const ok =
        last?.mode === mode && options.fresherThanMs !== undefined && now - last.at < options.fresherThanMs;
      if (ok && last) heard.set(url, last);
      return ok;
    };
    const toCall = urls.filter((url) => !fresh(url));
    const results = await Promise.all(
      toCall.map(async (url) => {
        const error = await this.#post(url, mode);
        if (!error) heard.set(url, { mode, at: Date.now() });
        return error;
      }),
    );
    const errors = results.filter((r): r is string => r !== null);
    return { total: urls.length, acknowledged: urls.length - errors.length, sent: toCall.length, errors };
  }

  async #post(url: string, mode: StandbyMode): Promise<string | null> {
    try {
      const res = await this.#fetch(`${url}/internal/v1/mode`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.#token ?? ''}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ mode }),
        signal: this.#signal
          ? AbortSignal.any([this.#signal, AbortSignal.timeout(this.#timeoutMs)])
          : AbortSignal.timeout(this.#timeoutMs),
      });
      await res.body?.cancel();
      return res.ok ? null : `${url}: HTTP ${res.status}`;
    } catch (err) {
      return `${url}: ${(err as Error).message}`;
    }
  }
}

/**
 * `@gatehouse/web`: the widget for bundlers. Importing it does nothing (no DOM access, safe in Node and
 * in server-side rendering); `loadGatehouse` adds the deployment's `gatehouse.js` to the page once, and
 * `render` renders a widget with it. The widget itself comes from the Gatehouse API (`/widget/…`), so it
 * always matches the server and carries the deployment's standby hosts.
 */
import type { RenderOptions, WidgetHandle } from '../options.ts';

export type { Mode, RefreshExpired, RenderOptions, Retry, Size, Theme, WidgetHandle } from '../options.ts';

/** What the widget reports to `onError` (the loader's `Gatehouse.GatehouseError`). */
export interface GatehouseError extends Error {
  /** The API's error code (`server_token_required`...) or the widget's own (`network_error`, `timeout`...). */
  code: string;
  /** HTTP status; 0 when no answer came. */
  status: number;
  /** Seconds from Retry-After, when the API sent one. */
  retryAfter?: number;
}

/** `window.Gatehouse`, as gatehouse.js defines it. */
export interface GatehouseApi {
  render(container: HTMLElement | string, options: RenderOptions): WidgetHandle;
  scan(root?: ParentNode): WidgetHandle[];
  get(container: HTMLElement): WidgetHandle | undefined;
  /** Verifies again the widget in `container`, even holding a token (after a co_, or a token the backend could not validate). */
  reverify(container: HTMLElement | string): Promise<string>;
  languages: readonly string[];
  version: string;
}

export interface LoadOptions {
  /** The Gatehouse API's base URL (`https://gatehouse.example.com`); the widget is fetched from its /widget/. */
  apiServer: string;
  /** A CSP nonce for the script element. */
  nonce?: string;
  /** Give up after this long. Default 15000. */
  timeoutMs?: number;
}

let loading: Promise<GatehouseApi> | undefined;

const loaded = (): GatehouseApi | undefined =>
  (globalThis as unknown as { Gatehouse?: GatehouseApi }).Gatehouse;

/**
 * Adds `{apiServer}/widget/gatehouse.js` to the page (once) and resolves with `window.Gatehouse`. Rejects
 * outside a browser, when the script cannot be loaded, or after `timeoutMs`; a later call tries again.
 */
export function loadGatehouse(options: LoadOptions): Promise<GatehouseApi> {
  const ready = loaded();
  if (ready) return Promise.resolve(ready);
  if (typeof document === 'undefined') {
    return Promise.reject(
      new Error('loadGatehouse: the Gatehouse widget runs in a browser (no document here).'),
    );
  }
  if (!options || typeof options.apiServer !== 'string' || !/^https?:\/\//i.test(options.apiServer)) {
    return Promise.reject(
      new TypeError('loadGatehouse: options.apiServer must be the http(s) URL of the Gatehouse API.'),
    );
  }
  loading ??= new Promise<GatehouseApi>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = `${options.apiServer.replace(/\/+$/, '')}/widget/gatehouse.js`;
    script.async = true;
    if (options.nonce) script.nonce = options.nonce;
    const timer = setTimeout(
      () => fail(new Error(`loadGatehouse: ${script.src} did not load in time.`)),
      options.timeoutMs ?? 15_000,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      script.remove();
      reject(error);
    };
    script.onload = () => {
      clearTimeout(timer);
      const api = loaded();
      api ? resolve(api) : fail(new Error(`loadGatehouse: ${script.src} did not define window.Gatehouse.`));
    };
    script.onerror = () => fail(new Error(`loadGatehouse: cannot load ${script.src}.`));
    document.head.appendChild(script);
  }).catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Loads the widget (when needed) and renders one into `container`; `options.apiServer` is required. */
export async function render(
  container: HTMLElement | string,
  options: RenderOptions & { apiServer: string; nonce?: string },
): Promise<WidgetHandle> {
  const api = await loadGatehouse({
    apiServer: options.apiServer,
    ...(options.nonce ? { nonce: options.nonce } : {}),
  });
  return api.render(container, options);
}

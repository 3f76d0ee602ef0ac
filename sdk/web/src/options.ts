import type { GatehouseError } from './transport.ts';

export type Mode = 'invisible' | 'popup' | 'embedded' | 'button';
export type Theme = 'light' | 'dark' | 'auto';
/** The box's size: `normal` (up to 320 px wide), `compact` (150 px, stacked) or `flexible` (the container's width). */
export type Size = 'normal' | 'compact' | 'flexible';
/** After a failure the widget may retry by itself (`auto`, every `retryInterval` ms) or wait for the user (`never`). */
export type Retry = 'auto' | 'never';
/** When a token expires: verify again by itself (`auto`), when the user asks (`manual`), or only after `reset()` (`never`). */
export type RefreshExpired = 'auto' | 'manual' | 'never';

/** The options of `Gatehouse.render(container, options)` (README.md documents each one). */
export interface RenderOptions {
  appKey: string;
  /** Business scene (`login`, `register`, `pay`...), the same one the backend checks. */
  action: string;
  /** Base URL of the main API; default: the origin gatehouse.js was loaded from. Never a standby host. */
  apiServer?: string;
  /**
   * Standby (bypass) hosts to fail over to, instead of the deployment's list (which the widget learns by
   * itself): used only after the main API failed. An array, or URLs separated by commas.
   */
  bypassServers?: string[] | string;
  mode?: Mode;
  /** Button mode: the button (or a CSS selector) whose click runs the verification. Default: the container. */
  button?: HTMLElement | string;
  serverToken?: string;
  /** Fetches a fresh server token (before the first init without one, and when init says it expired or ran out). */
  getServerToken?: () => Promise<string>;
  theme?: Theme;
  size?: Size;
  lang?: string;
  /** Customer data ([A-Za-z0-9_-], at most 255), bound to the token; the Turnstile siteverify endpoint returns it. */
  cData?: string;
  retry?: Retry;
  /** Milliseconds between automatic retries (retry `auto`); default 8000, at most 900000. */
  retryInterval?: number;
  refreshExpired?: RefreshExpired;
  /** tabindex of the box's button (embedded and popup modes). */
  tabIndex?: number;
  onSuccess?: (token: string) => void;
  onError?: (error: GatehouseError) => void;
  /** The token expired (it is no longer in the form field); `refreshExpired` says what happens next. */
  onExpired?: (token: string) => void;
  /**
   * No Gatehouse server could be reached: the widget holds a client-only `co_` token (in the field too),
   * which proves nothing. Called instead of onSuccess; the page decides (docs/widget-failover.md).
   */
  onUnverified?: (token: string) => void;
  /** An image challenge was not answered before it expired; a new one replaces it. */
  onTimeout?: () => void;
  /** An image challenge is about to be shown (the widget becomes interactive). */
  onBeforeInteractive?: () => void;
  /** The image challenge is gone (answered, closed or replaced by an error). */
  onAfterInteractive?: () => void;
  onClose?: () => void;
  onReady?: () => void;
  /** Name of the hidden input filled in the enclosing form; default `gatehouse-token`. */
  fieldName?: string;
}

/** What `render` returns. */
export interface WidgetHandle {
  /** Runs a verification (or returns the current token); resolves with the token, rejects with a GatehouseError. */
  execute(): Promise<string>;
  /** Forgets the token, empties the field and returns to the initial state. */
  reset(): void;
  /** Removes the widget, its field and its listeners. */
  remove(): void;
  /** The current token, or undefined. */
  getToken(): string | undefined;
  /** Whether the last token expired (and no new one came since). */
  isExpired(): boolean;
  /** `idle`, `running`, `done` (a real token), `unverified` (a client-only `co_`), `error` or `expired`. */
  getState(): string;
  /**
   * Verifies again now, even holding a token: after a `co_`, or when the backend could not validate a
   * token because the main API is down (the standby hosts answer after a short probe of the main API).
   */
  reverify(): Promise<string>;
}

/** The first of each list is the default. */
const MODES: Mode[] = ['embedded', 'invisible', 'popup', 'button'];
const THEMES: Theme[] = ['auto', 'light', 'dark'];
const SIZES: Size[] = ['normal', 'compact', 'flexible'];
const RETRIES: Retry[] = ['auto', 'never'];
const REFRESHES: RefreshExpired[] = ['auto', 'manual', 'never'];

/** Checks an enumerated option; its default when unset. */
function oneOf<T extends string>(name: string, value: T | undefined, allowed: T[]): T {
  if (value === undefined) return allowed[0] as T;
  if (!allowed.includes(value))
    throw new TypeError(`Gatehouse.render: options.${name} must be one of ${allowed.join(', ')}.`);
  return value;
}

/** Checks options with precise messages; fills defaults. Throws a TypeError on misconfiguration. */
export function normalise(
  options: RenderOptions,
  defaultApiServer: string,
): Required<
  Pick<
    RenderOptions,
    'mode' | 'theme' | 'fieldName' | 'apiServer' | 'size' | 'retry' | 'retryInterval' | 'refreshExpired'
  >
> &
  Omit<RenderOptions, 'bypassServers'> & { bypassServers?: string[] } {
  if (!options || typeof options.appKey !== 'string' || !options.appKey) {
    throw new TypeError('Gatehouse.render: options.appKey (the public app key) is required.');
  }
  if (typeof options.action !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(options.action)) {
    throw new TypeError('Gatehouse.render: options.action must match [A-Za-z0-9_.:-]{1,64}, e.g. "login".');
  }
  const mode = oneOf('mode', options.mode, MODES);
  const theme = oneOf('theme', options.theme, THEMES);
  const size = oneOf('size', options.size, SIZES);
  const retry = oneOf('retry', options.retry, RETRIES);
  const refreshExpired = oneOf('refreshExpired', options.refreshExpired, REFRESHES);
  const retryInterval = options.retryInterval ?? 8000;
  if (!Number.isInteger(retryInterval) || retryInterval < 1 || retryInterval > 900_000)
    throw new TypeError('Gatehouse.render: options.retryInterval must be a whole number of ms, 1 to 900000.');
  if (options.tabIndex !== undefined && !Number.isInteger(options.tabIndex))
    throw new TypeError('Gatehouse.render: options.tabIndex must be an integer.');
  if (options.cData !== undefined && !/^[A-Za-z0-9_-]{0,255}$/.test(options.cData))
    throw new TypeError('Gatehouse.render: options.cData must match [A-Za-z0-9_-]{0,255}.');
  const bypass = options.bypassServers;
  const bypassServers = (typeof bypass === 'string' ? bypass.split(',') : (bypass ?? []))
    .map((url) => String(url).trim())
    .filter(Boolean);
  for (const url of bypassServers) {
    if (!/^https?:\/\/[^\s]+$/i.test(url))
      throw new TypeError(`Gatehouse.render: options.bypassServers: "${url}" is not an http(s) URL.`);
  }
  return {
    ...options,
    bypassServers,
    mode,
    theme,
    size,
    retry,
    retryInterval,
    refreshExpired,
    fieldName: options.fieldName || 'gatehouse-token',
    apiServer: options.apiServer || defaultApiServer,
  };
}

/** Calls the global function a data attribute names, looked up at call time (it may be defined later). */
function named(name: string) {
  return (...args: unknown[]) => {
    const fn = (window as unknown as Record<string, unknown>)[name];
    return typeof fn === 'function' ? fn(...args) : undefined;
  };
}

/**
 * Options from an element's `data-gatehouse-*` attributes: app-key, action, mode, theme, size, lang, cdata,
 * retry, retry-interval, refresh-expired, tabindex, api-server, bypass-servers (comma-separated),
 * server-token, field-name, button (a selector), and names of global functions: callback (success),
 * error-callback, expired-callback, unverified-callback, timeout-callback, before-interactive-callback,
 * after-interactive-callback, close-callback, ready-callback, server-token-callback.
 */
export function fromDataset(el: HTMLElement): RenderOptions {
  const d = el.dataset;
  const options: RenderOptions = { appKey: d.gatehouseAppKey ?? '', action: d.gatehouseAction ?? 'default' };
  if (d.gatehouseMode) options.mode = d.gatehouseMode as Mode;
  if (d.gatehouseTheme) options.theme = d.gatehouseTheme as Theme;
  if (d.gatehouseLang) options.lang = d.gatehouseLang;
  if (d.gatehouseApiServer) options.apiServer = d.gatehouseApiServer;
  if (d.gatehouseBypassServers) options.bypassServers = d.gatehouseBypassServers;
  if (d.gatehouseServerToken) options.serverToken = d.gatehouseServerToken;
  if (d.gatehouseFieldName) options.fieldName = d.gatehouseFieldName;
  if (d.gatehouseButton) options.button = d.gatehouseButton;
  if (d.gatehouseSize) options.size = d.gatehouseSize as Size;
  if (d.gatehouseCdata) options.cData = d.gatehouseCdata;
  if (d.gatehouseRetry) options.retry = d.gatehouseRetry as Retry;
  if (d.gatehouseRetryInterval) options.retryInterval = Number(d.gatehouseRetryInterval);
  if (d.gatehouseRefreshExpired) options.refreshExpired = d.gatehouseRefreshExpired as RefreshExpired;
  if (d.gatehouseTabindex) options.tabIndex = Number(d.gatehouseTabindex);
  const callbacks = {
    onSuccess: d.gatehouseCallback,
    onError: d.gatehouseErrorCallback,
    onExpired: d.gatehouseExpiredCallback,
    onUnverified: d.gatehouseUnverifiedCallback,
    onTimeout: d.gatehouseTimeoutCallback,
    onBeforeInteractive: d.gatehouseBeforeInteractiveCallback,
    onAfterInteractive: d.gatehouseAfterInteractiveCallback,
    onClose: d.gatehouseCloseCallback,
    onReady: d.gatehouseReadyCallback,
    getServerToken: d.gatehouseServerTokenCallback,
  };
  for (const [key, name] of Object.entries(callbacks)) {
    if (name) (options as unknown as Record<string, unknown>)[key] = named(name);
  }
  return options;
}

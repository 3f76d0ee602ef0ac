import type { RefreshExpired, RenderOptions, Retry, Size, WidgetHandle } from '../options.ts';
import type { GatehouseError } from '../transport.ts';

/*
 * One vendor-style widget, built on `Gatehouse.render`: the vendor's markup and globals are translated
 * here into a Gatehouse widget, and the token is written into the vendor's own response fields.
 */

/** A response field the vendor's script puts in the enclosing form. */
export interface FieldSpec {
  name: string;
  /** reCAPTCHA and hCaptcha use a textarea (pages select `textarea[name=g-recaptcha-response]`), Turnstile an input. */
  tag: 'input' | 'textarea';
}

export interface CompatOptions {
  sitekey: string;
  /** The vendor's action, or none (the widget then uses `default`). */
  action?: string;
  cdata?: string;
  theme?: string;
  lang?: string;
  /** The box's size: the vendors' `normal`, `compact` and Turnstile's `flexible` (others: `normal`). */
  size?: string;
  tabIndex?: number;
  /** Turnstile's `retry` and `retry-interval` (ms): retries after a failure of the network or the service. */
  retry?: Retry;
  retryInterval?: number;
  /** What an expired token leads to: Turnstile's `refresh-expired`; reCAPTCHA and hCaptcha wait for the user. */
  refreshExpired: RefreshExpired;
  /** Nothing visible: Gatehouse's invisible mode (a dialog only when an image challenge is needed). */
  invisible: boolean;
  /** Runs only when `execute` is called (reCAPTCHA/hCaptcha invisible, Turnstile `execution: execute`). */
  onDemand: boolean;
  fields: FieldSpec[];
  callback?: (token: string) => void;
  expiredCallback?: (token: string) => void;
  errorCallback?: (code: string) => void;
  closeCallback?: () => void;
  timeoutCallback?: () => void;
  beforeInteractiveCallback?: () => void;
  afterInteractiveCallback?: () => void;
  /** The container is the page's button: its click runs the verification, then calls `callback`. */
  button?: boolean;
  /**
   * A checkbox (reCAPTCHA v2, hCaptcha): nothing runs and nothing calls back before the person clicks
   * the box, and `reset` returns it to unchecked. Gatehouse's popup mode is exactly that box.
   */
  checkbox?: boolean;
}

/** The widget's own hidden field is dropped: the vendor's fields replace it. */
const INTERNAL_FIELD = 'gatehouse-compat-token';
const THEMES = ['light', 'dark', 'auto'];
const SIZES = ['normal', 'compact', 'flexible'];
/** Controls cannot hold other elements: the widget then goes right after them (as the loader does). */
const CONTROL = /^(BUTTON|INPUT|A|SELECT|TEXTAREA)$/;

/** A vendor callback given as a function or as the name of a global function (looked up when called). */
export function callable(value: unknown): ((...args: unknown[]) => unknown) | undefined {
  if (typeof value === 'function') return value as (...args: unknown[]) => unknown;
  if (typeof value !== 'string' || !value) return undefined;
  return (...args) => {
    const fn = (window as unknown as Record<string, unknown>)[value];
    return typeof fn === 'function' ? fn(...args) : undefined;
  };
}

/** `name`, else `name-1`, `name-2`...: the first id no element of the page has. */
function freeId(name: string): string {
  if (!document.getElementById(name)) return name;
  let n = 1;
  while (document.getElementById(`${name}-${n}`)) n++;
  return `${name}-${n}`;
}

/** An element, an element id (reCAPTCHA, hCaptcha) or a CSS selector (Turnstile's `#id`). */
export function resolveContainer(container: unknown): HTMLElement | null {
  if (container instanceof HTMLElement) return container;
  if (typeof container !== 'string' || !container) return null;
  const byId = document.getElementById(container);
  if (byId) return byId;
  try {
    return document.querySelector<HTMLElement>(container);
  } catch {
    return null;
  }
}

export class CompatWidget {
  readonly container: HTMLElement;
  private holder: HTMLElement;
  private fields: (HTMLInputElement | HTMLTextAreaElement)[] = [];
  private handle?: WidgetHandle;
  private token?: string;
  private o: CompatOptions;

  constructor(container: HTMLElement, options: CompatOptions) {
    const o = options;
    this.o = o;
    this.container = container;
    this.holder = document.createElement('div');
    this.holder.className = 'gatehouse-compat';
    for (const spec of o.fields) {
      const field = document.createElement(spec.tag);
      field.name = spec.name;
      if (field instanceof HTMLInputElement) field.type = 'hidden';
      else field.hidden = true;
      // reCAPTCHA and hCaptcha give their textarea an id of the same name, then `-1`, `-2`... to the next
      // widgets' (Google's multiple-widget example).
      if (field instanceof HTMLTextAreaElement) field.id = freeId(spec.name);
      this.fields.push(field);
    }
    if (CONTROL.test(container.tagName)) container.after(this.holder, ...this.fields);
    else container.append(this.holder, ...this.fields);
    if (!o.onDemand) {
      try {
        this.ensure();
      } catch (error) {
        // A misconfiguration (an action Gatehouse refuses...): leave the page as it was, and say why.
        this.remove();
        throw error;
      }
    }
    if (o.button) container.addEventListener('click', this.onClick, true);
  }

  /** Creates the Gatehouse widget (which starts verifying at once in embedded and invisible modes). */
  private ensure(): WidgetHandle {
    if (!this.handle) {
      const theme = THEMES.includes(this.o.theme ?? '') ? (this.o.theme as RenderOptions['theme']) : 'auto';
      const o = this.o;
      const options: RenderOptions = {
        appKey: o.sitekey,
        action: o.action || 'default',
        mode: o.invisible ? 'invisible' : o.checkbox ? 'popup' : 'embedded',
        theme,
        size: SIZES.includes(o.size ?? '') ? (o.size as Size) : 'normal',
        refreshExpired: o.refreshExpired,
        fieldName: INTERNAL_FIELD,
        onSuccess: (token) => this.passed(token),
        onError: (error: GatehouseError) => o.errorCallback?.(error.code),
        onExpired: (token) => this.expire(token),
        // The vendors' pages know no unverified state: their callback gets the co_ (the box says it is
        // unverified) and their backend refuses it, as siteverify does.
        onUnverified: (token) => this.passed(token),
        onClose: () => o.closeCallback?.(),
        onTimeout: () => o.timeoutCallback?.(),
        onBeforeInteractive: () => o.beforeInteractiveCallback?.(),
        onAfterInteractive: () => o.afterInteractiveCallback?.(),
      };
      if (o.lang && o.lang !== 'auto') options.lang = o.lang;
      if (o.cdata) options.cData = o.cdata;
      if (Number.isInteger(o.tabIndex)) options.tabIndex = o.tabIndex;
      if (o.retry) options.retry = o.retry;
      if (o.retryInterval) options.retryInterval = o.retryInterval;
      this.handle = window.Gatehouse.render(this.holder, options);
      this.holder.querySelector(`input[name="${INTERNAL_FIELD}"]`)?.remove();
    }
    return this.handle;
  }

  private passed(token: string): void {
    this.token = token;
    for (const field of this.fields) field.value = token;
    this.o.callback?.(token);
  }

  /** The token ran out; `refreshExpired` says whether the Gatehouse widget verifies again by itself. */
  private expire(token: string): void {
    this.token = undefined;
    for (const field of this.fields) field.value = '';
    this.o.expiredCallback?.(token);
  }

  private onClick = (event: Event): void => {
    event.preventDefault();
    event.stopImmediatePropagation();
    this.execute().catch(() => {});
  };

  /**
   * Runs a verification; resolves the token. The vendor's callback is called with it, also when a token is
   * already there (the vendors call it on every execute).
   */
  execute(): Promise<string> {
    const token = this.token;
    if (token) {
      queueMicrotask(() => this.o.callback?.(token));
      return Promise.resolve(token);
    }
    try {
      return this.ensure().execute();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Forgets the token and, for widgets that run by themselves, verifies again; a checkbox waits, unchecked. */
  reset(): void {
    this.token = undefined;
    for (const field of this.fields) field.value = '';
    if (!this.handle) return;
    this.handle.reset();
    if (!this.o.onDemand && !this.o.checkbox) this.handle.execute().catch(() => {});
  }

  remove(): void {
    this.handle?.remove();
    this.handle = undefined;
    this.container.removeEventListener('click', this.onClick, true);
    this.holder.remove();
    for (const field of this.fields) field.remove();
  }

  response(): string | undefined {
    return this.token;
  }

  isExpired(): boolean {
    return this.handle?.isExpired() ?? false;
  }
}

/**
 * The widgets one vendor API rendered, by id (Turnstile and hCaptcha hand out strings, reCAPTCHA numbers).
 * Methods called without an id act on the first widget, as reCAPTCHA and hCaptcha document.
 */
export class Registry<Id extends string | number> {
  private widgets = new Map<Id, CompatWidget>();
  private count = 0;
  private nextId: (n: number) => Id;

  constructor(nextId: (n: number) => Id) {
    this.nextId = nextId;
  }

  add(widget: CompatWidget): Id {
    const id = this.nextId(this.count++);
    this.widgets.set(id, widget);
    return id;
  }

  /** By id, by container (element, id or selector), or the first widget when `key` is undefined. */
  find(key?: unknown): CompatWidget | undefined {
    if (key === undefined || key === null || key === '') return this.widgets.values().next().value;
    const byId = this.widgets.get(key as Id);
    if (byId) return byId;
    const container = resolveContainer(key);
    if (!container) return undefined;
    for (const widget of this.widgets.values()) if (widget.container === container) return widget;
    return undefined;
  }

  /** The id of the widget rendered into `container`, if any. */
  idOf(container: HTMLElement): Id | undefined {
    for (const [id, widget] of this.widgets) if (widget.container === container) return id;
    return undefined;
  }

  rendered(container: HTMLElement): boolean {
    return this.idOf(container) !== undefined;
  }

  delete(key?: unknown): void {
    const widget = this.find(key);
    if (!widget) return;
    widget.remove();
    for (const [id, w] of this.widgets) if (w === widget) this.widgets.delete(id);
  }
}

/** The vendor's `data-*` attributes of an element, as a render-parameters object (`data-expired-callback` → `expired-callback`). */
export function dataParams(el: HTMLElement): Record<string, string> {
  const params: Record<string, string> = {};
  for (const attr of Array.from(el.attributes)) {
    if (attr.name.startsWith('data-')) params[attr.name.slice(5)] = attr.value;
  }
  return params;
}

/** Runs `fn` once the document is parsed (implicit render needs the page's markup). */
export function whenParsed(fn: () => void): void {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', fn, { once: true });
  else queueMicrotask(fn);
}

/** A function that calls the global named by the script URL's `onload` parameter, if any. */
export function onloadCallback(params: URLSearchParams): void {
  const name = params.get('onload');
  if (name) callable(name)?.();
}

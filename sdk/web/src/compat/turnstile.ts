import {
  type CompatOptions,
  CompatWidget,
  callable,
  dataParams,
  Registry,
  resolveContainer,
  whenParsed,
} from './widget.ts';

/*
 * `window.turnstile`, as Cloudflare documents it (developers.cloudflare.com/turnstile/get-started/
 * client-side-rendering/ and .../widget-configurations/): implicit render of `.cf-turnstile` elements,
 * `?render=explicit`, `?onload=`, turnstile.render/execute/reset/remove/getResponse/isExpired/ready, the
 * render parameters (or `data-` attributes) below, and a hidden `cf-turnstile-response` input.
 */

type Params = Record<string, unknown>;

function options(p: Params): CompatOptions {
  const responseField = p['response-field'] !== false && p['response-field'] !== 'false';
  return {
    sitekey: String(p.sitekey ?? ''),
    action: p.action ? String(p.action) : undefined,
    cdata: p.cdata || p.cData ? String(p.cdata ?? p.cData) : undefined,
    theme: p.theme ? String(p.theme) : undefined,
    lang: p.language ? String(p.language) : undefined,
    size: p.size ? String(p.size) : undefined,
    tabIndex: p.tabindex === undefined ? undefined : Number(p.tabindex),
    retry: p.retry === 'never' ? 'never' : 'auto',
    retryInterval: p['retry-interval'] === undefined ? undefined : Number(p['retry-interval']),
    refreshExpired: (['manual', 'never'].includes(String(p['refresh-expired']))
      ? p['refresh-expired']
      : 'auto') as CompatOptions['refreshExpired'],
    // Turnstile's invisible widgets are a dashboard setting; `appearance: interaction-only` shows nothing
    // until an interaction is needed, which is what Gatehouse's invisible mode does.
    invisible: p.size === 'invisible' || p.appearance === 'interaction-only',
    onDemand: p.execution === 'execute',
    fields: responseField
      ? [{ name: String(p['response-field-name'] || 'cf-turnstile-response'), tag: 'input' }]
      : [],
    callback: callable(p.callback),
    expiredCallback: callable(p['expired-callback']),
    errorCallback: callable(p['error-callback']),
    timeoutCallback: callable(p['timeout-callback']),
    beforeInteractiveCallback: callable(p['before-interactive-callback']),
    afterInteractiveCallback: callable(p['after-interactive-callback']),
  };
}

export function installTurnstile(): { implicitRender(): void } {
  const widgets = new Registry<string>((n) => `cf-chl-widget-${n.toString(36)}${Date.now().toString(36)}`);

  function render(container: unknown, params: Params = {}): string | undefined {
    const target = resolveContainer(container);
    if (!target) {
      console.error(`turnstile.render: no element matches ${String(container)}.`);
      return undefined;
    }
    // One widget per container: rendering it again hands back the same one.
    const existing = widgets.idOf(target);
    if (existing !== undefined) return existing;
    const merged = { ...dataParams(target), ...params };
    if (!merged.sitekey) {
      console.error('turnstile.render: the sitekey parameter is required.');
      return undefined;
    }
    return widgets.add(new CompatWidget(target, options(merged)));
  }

  function implicitRender(): void {
    document.querySelectorAll<HTMLElement>('.cf-turnstile').forEach((el) => {
      try {
        if (!widgets.rendered(el)) render(el);
      } catch (error) {
        console.error(error);
      }
    });
  }

  const turnstile = {
    render,
    implicitRender,
    /** Runs the widget in `container`; renders it there first (with `params`) if there is none. */
    execute(container?: unknown, params?: Params): void {
      let widget = widgets.find(container);
      if (!widget && container !== undefined) {
        const id = render(container, { ...params, execution: 'execute' });
        widget = id === undefined ? undefined : widgets.find(id);
      }
      widget?.execute().catch(() => {});
    },
    reset: (id?: unknown) => widgets.find(id)?.reset(),
    remove: (id?: unknown) => widgets.delete(id),
    getResponse: (id?: unknown) => widgets.find(id)?.response(),
    isExpired: (id?: unknown) => widgets.find(id)?.isExpired() ?? false,
    ready(callback: () => void): void {
      if (typeof callback !== 'function') throw new TypeError('turnstile.ready needs a function.');
      whenParsed(callback);
    },
  };
  (window as unknown as { turnstile: typeof turnstile }).turnstile = turnstile;
  return { implicitRender };
}

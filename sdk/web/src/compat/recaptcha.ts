import {
  type CompatOptions,
  CompatWidget,
  callable,
  dataParams,
  type FieldSpec,
  Registry,
  resolveContainer,
  whenParsed,
} from './widget.ts';

/*
 * `window.grecaptcha` as Google documents it (developers.google.com/recaptcha/docs/display, /invisible,
 * /v3): implicit render of `.g-recaptcha` elements (a div: the v2 checkbox; `data-size="invisible"`: run by
 * grecaptcha.execute(); a button: the invisible challenge bound to it, its `data-callback` called with the
 * token), `?render=explicit` and `?onload=`, grecaptcha.render/reset/getResponse/execute/ready, v3's
 * `grecaptcha.execute(siteKey, {action})` promise, and a `g-recaptcha-response` textarea in the form.
 * The same object is also `grecaptcha.enterprise` (reCAPTCHA Enterprise's `enterprise.js`).
 */

type Params = Record<string, unknown>;
const CONTROL = /^(BUTTON|INPUT)$/;

export interface RecaptchaApi {
  render(container: unknown, params?: Params): number | undefined;
  reset(id?: unknown): void;
  getResponse(id?: unknown): string;
  execute(idOrSiteKey?: unknown, options?: { action?: string }): Promise<string> | undefined;
  ready(callback: () => void): void;
}

/** The grecaptcha API over CompatWidgets writing the token into `fields`. */
export function recaptchaApi(
  fields: FieldSpec[],
  defaults: { lang?: string; name: string; checkbox: boolean },
): { api: RecaptchaApi; implicitRender(selector: string): void } {
  const widgets = new Registry<number>((n) => n);

  function options(p: Params, button: boolean): CompatOptions {
    const invisible = button || p.size === 'invisible';
    return {
      sitekey: String(p.sitekey ?? ''),
      action: p.action ? String(p.action) : undefined,
      theme: p.theme ? String(p.theme) : undefined,
      lang: p.hl ? String(p.hl) : defaults.lang,
      size: p.size ? String(p.size) : undefined,
      tabIndex: p.tabindex === undefined ? undefined : Number(p.tabindex),
      // An expired reCAPTCHA waits for the user to check the box again (or for grecaptcha.execute()).
      refreshExpired: 'manual',
      invisible,
      onDemand: invisible,
      button,
      // The visible box is a checkbox: it waits for the person's click.
      checkbox: !invisible && defaults.checkbox,
      fields,
      callback: callable(p.callback),
      expiredCallback: callable(p['expired-callback']),
      errorCallback: callable(p['error-callback']),
    };
  }

  function render(container: unknown, params: Params = {}): number | undefined {
    const target = resolveContainer(container);
    if (!target) {
      console.error(`${defaults.name}.render: no element matches ${String(container)}.`);
      return undefined;
    }
    // One widget per container: rendering it again hands back the same one.
    const existing = widgets.idOf(target);
    if (existing !== undefined) return existing;
    const merged = { ...dataParams(target), ...params };
    if (!merged.sitekey) {
      console.error(`${defaults.name}.render: the sitekey parameter is required.`);
      return undefined;
    }
    return widgets.add(new CompatWidget(target, options(merged, CONTROL.test(target.tagName))));
  }

  /** v3: a fresh token per call, from a widget that exists only for it. */
  function executeV3(sitekey: string, action: unknown): Promise<string> {
    const holder = document.createElement('div');
    holder.hidden = true;
    document.body.append(holder);
    const widget = new CompatWidget(holder, {
      ...options({ sitekey, action }, false),
      invisible: true,
      onDemand: true,
      fields: [],
    });
    return widget.execute().finally(() => {
      widget.remove();
      holder.remove();
    });
  }

  const api: RecaptchaApi = {
    render,
    reset: (id?: unknown) => widgets.find(id)?.reset(),
    getResponse: (id?: unknown) => widgets.find(id)?.response() ?? '',
    execute(idOrSiteKey?: unknown, options?: { action?: string }) {
      // Widget ids are numbers; a string is v3's site key.
      if (typeof idOrSiteKey === 'string') return executeV3(idOrSiteKey, options?.action);
      widgets
        .find(idOrSiteKey)
        ?.execute()
        .catch(() => {});
      return undefined;
    },
    ready: (callback: () => void) => whenParsed(callback),
  };
  return {
    api,
    implicitRender(selector: string) {
      document.querySelectorAll<HTMLElement>(selector).forEach((el) => {
        try {
          if (!widgets.rendered(el)) render(el);
        } catch (error) {
          console.error(error);
        }
      });
    },
  };
}

/**
 * `checkbox`: Google's v2 box waits for the person's click; under Turnstile's `?compat=recaptcha` the box is
 * Turnstile's managed widget, which runs by itself.
 */
export function installRecaptcha(script: URLSearchParams, checkbox = true): { implicitRender(): void } {
  const { api, implicitRender } = recaptchaApi([{ name: 'g-recaptcha-response', tag: 'textarea' }], {
    lang: script.get('hl') ?? undefined,
    name: 'grecaptcha',
    checkbox,
  });
  const grecaptcha = { ...api, enterprise: api };
  (window as unknown as { grecaptcha: typeof grecaptcha }).grecaptcha = grecaptcha;
  return { implicitRender: () => implicitRender('.g-recaptcha') };
}

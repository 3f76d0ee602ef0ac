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
 * `window.hcaptcha` as hCaptcha documents it (docs.hcaptcha.com, "Configuration" and "Invisible"):
 * implicit render of `.h-captcha` elements (a div: the checkbox; `data-size="invisible"`: run by
 * hcaptcha.execute(); a button: bound to it), `?render=explicit`, `?onload=`, `?hl=`, `?recaptchacompat=off`
 * (otherwise `window.grecaptcha` is the same object, as hCaptcha's default compatibility hook), the
 * methods render/execute (with `{async: true}`, a promise of `{response, key}`)/reset/remove/getResponse/
 * getRespKey, and two textareas in the form: `h-captcha-response` and `g-recaptcha-response`.
 */

type Params = Record<string, unknown>;
const CONTROL = /^(BUTTON|INPUT)$/;

/** hCaptcha's error-callback and execute-rejection codes for ours. */
function hcaptchaError(code: string): string {
  if (code === 'closed') return 'challenge-closed';
  if (code === 'network_error' || code === 'timeout') return 'network-error';
  return 'challenge-error';
}

export function installHcaptcha(script: URLSearchParams): { implicitRender(): void } {
  const widgets = new Registry<string>((n) => `${n}${Math.random().toString(36).slice(2, 10)}`);

  function options(p: Params, button: boolean): CompatOptions {
    const invisible = button || p.size === 'invisible';
    const error = callable(p['error-callback']);
    return {
      sitekey: String(p.sitekey ?? ''),
      theme: typeof p.theme === 'string' ? p.theme : undefined,
      lang: p.hl ? String(p.hl) : (script.get('hl') ?? undefined),
      size: p.size ? String(p.size) : undefined,
      tabIndex: p.tabindex === undefined ? undefined : Number(p.tabindex),
      // An expired hCaptcha waits for the user (or for hcaptcha.execute()).
      refreshExpired: 'manual',
      invisible,
      onDemand: invisible,
      button,
      // The visible box is a checkbox: it waits for the person's click.
      checkbox: !invisible,
      fields: [
        { name: 'h-captcha-response', tag: 'textarea' },
        { name: 'g-recaptcha-response', tag: 'textarea' },
      ],
      callback: callable(p.callback),
      expiredCallback: callable(p['expired-callback']),
      errorCallback: error && ((code) => error(hcaptchaError(code))),
      closeCallback: callable(p['close-callback']),
      beforeInteractiveCallback: callable(p['open-callback']),
      timeoutCallback: callable(p['chalexpired-callback']),
    };
  }

  function render(container: unknown, params: Params = {}): string | undefined {
    const target = resolveContainer(container);
    if (!target) {
      console.error(`hcaptcha.render: no element matches ${String(container)}.`);
      return undefined;
    }
    // One widget per container: rendering it again hands back the same one.
    const existing = widgets.idOf(target);
    if (existing !== undefined) return existing;
    const merged = { ...dataParams(target), ...params };
    if (!merged.sitekey) {
      console.error('hcaptcha.render: the sitekey parameter is required.');
      return undefined;
    }
    return widgets.add(new CompatWidget(target, options(merged, CONTROL.test(target.tagName))));
  }

  const hcaptcha = {
    render,
    /** With `{async: true}`: a promise of `{response, key}`, rejected with an hCaptcha error code. */
    execute(
      id?: unknown,
      opts?: { async?: boolean },
    ): Promise<{ response: string; key: string }> | undefined {
      // execute({async: true}) without an id is documented too.
      let key = id;
      let o = opts;
      if (id && typeof id === 'object' && !(id instanceof HTMLElement)) {
        o = id as { async?: boolean };
        key = undefined;
      }
      const widget = widgets.find(key);
      if (!o?.async) {
        widget?.execute().catch(() => {});
        return undefined;
      }
      if (!widget) return Promise.reject('invalid-captcha-id');
      return widget.execute().then(
        (response) => ({ response, key: '' }),
        (error: { code?: string }) => Promise.reject(hcaptchaError(String(error?.code ?? ''))),
      );
    },
    reset: (id?: unknown) => widgets.find(id)?.reset(),
    remove: (id?: unknown) => widgets.delete(id),
    getResponse: (id?: unknown) => widgets.find(id)?.response() ?? '',
    /** hCaptcha's response key (Enterprise "ekey"): Gatehouse has none, so always empty. */
    getRespKey: (id?: unknown) => (widgets.find(id) ? '' : undefined),
    ready: (callback: () => void) => whenParsed(callback),
  };
  const w = window as unknown as { hcaptcha: typeof hcaptcha; grecaptcha?: unknown };
  w.hcaptcha = hcaptcha;
  if (script.get('recaptchacompat') !== 'off' && !w.grecaptcha) w.grecaptcha = hcaptcha;
  return {
    implicitRender() {
      document.querySelectorAll<HTMLElement>('.h-captcha').forEach((el) => {
        try {
          if (!widgets.rendered(el)) render(el);
        } catch (error) {
          console.error(error);
        }
      });
    },
  };
}

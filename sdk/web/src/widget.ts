import { loadLanguage, loadUi, scriptUrl } from './chunks.ts';
import type { ChallengeHost, ChallengeView, ImageChallenge, LoaderKey, SubmitOutcome } from './contract.ts';
import { type Passed, verify } from './flow.ts';
import { dirOf, translator, widgetLanguage } from './i18n.ts';
import { normalise, type RenderOptions, type WidgetHandle } from './options.ts';
import { solvePow } from './pow.ts';
import { Route } from './route.ts';
import { collectSignals } from './signals.ts';
import { adopt, BOX_CSS, THEME_CSS } from './styles.ts';
import { GatehouseError } from './transport.ts';

/** A client-only token (failover.ts): made in the browser, proves nothing. */
const isClientOnly = (token: string) => token.startsWith('co_');

/**
 * `unverified`: no Gatehouse server could be reached, the widget holds a client-only `co_` token. It is
 * never shown as success: the integrator decides what a `co_` is worth (docs/widget-failover.md).
 */
export type State = 'idle' | 'running' | 'done' | 'unverified' | 'error' | 'expired';

/** Failures of the network or the service (not of the page's configuration): worth retrying by themselves. */
const TRANSIENT = ['network_error', 'timeout', 'bad_response', 'pow_failed', 'ui_failed', 'rate_limited'];

/** Callbacks of the challenge currently shown, swapped on each new challenge. */
interface Showing {
  submit(answer: unknown): Promise<SubmitOutcome>;
  refresh(): void;
  close(): void;
}

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, className = ''): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
};

/**
 * One rendered widget: its box (embedded and popup modes) or a bare live region (invisible and button
 * modes), the hidden form field, and the verification it runs. Challenges are shown by the lazily loaded
 * UI chunk: inline in embedded mode, in a modal dialog otherwise.
 */
export class Widget implements WidgetHandle {
  private o: ReturnType<typeof normalise>;
  private lang: string;
  private t: (key: LoaderKey) => string;
  private host = el('div');
  private live = el('div', 'sr');
  private field = el('input');
  private box?: HTMLDivElement;
  private check?: HTMLButtonElement;
  private status?: HTMLSpanElement;
  private label?: HTMLSpanElement;
  private slot?: HTMLDivElement;
  private button?: HTMLElement;
  private token?: string;
  private timer?: ReturnType<typeof setTimeout>;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private challengeTimer?: ReturnType<typeof setTimeout>;
  private expired = false;
  private state: State = 'idle';
  private statusKey?: LoaderKey;
  private liveKey?: LoaderKey;
  private interactive = false;
  private running?: Promise<string>;
  private abort?: AbortController;
  private view?: ChallengeView;
  private showing?: Showing;
  /** The user closed the challenge; kept until the view goes, for a close while a timed-out one reloads. */
  private shut?: GatehouseError;
  private serverToken?: string;
  private replaying = false;
  private route: Route;

  constructor(container: HTMLElement, options: RenderOptions) {
    this.o = normalise(options, scriptUrl.origin);
    this.lang = widgetLanguage(this.o.lang);
    this.t = translator();
    this.route = new Route({
      apiServer: this.o.apiServer,
      bypassServers: this.o.bypassServers,
      loaderOrigin: scriptUrl.origin,
    });
    // Other languages than English come with the language pack: relabel once it is there.
    if (this.lang !== 'en')
      loadLanguage(this.lang, this.route.widgetHosts()).then(
        (t) => {
          this.t = t;
          this.setState(this.state, this.statusKey);
          this.announce(this.liveKey);
        },
        (error) => console.warn(`Gatehouse: ${error?.message ?? error}; in English.`),
      );
    this.serverToken = this.o.serverToken;
    const { mode } = this.o;

    this.host.dataset.theme = this.o.theme;
    this.host.dataset.size = this.o.size;
    this.host.lang = this.lang;
    this.host.dir = dirOf(this.lang);
    const root = this.host.attachShadow({ mode: 'open' });
    adopt(root, THEME_CSS + (mode === 'embedded' || mode === 'popup' ? BOX_CSS : ''));
    this.live.setAttribute('role', 'status');
    if (mode === 'embedded' || mode === 'popup') this.renderBox(root);
    root.appendChild(this.live);

    this.field.type = 'hidden';
    this.field.dataset.gatehouseState = this.state;
    this.field.name = this.o.fieldName;
    // Controls cannot hold other elements: the widget then goes right after the container.
    const inside = !/^(BUTTON|INPUT|A|SELECT|TEXTAREA)$/.test(container.tagName);
    if (inside) container.append(this.host, this.field);
    else container.after(this.host, this.field);

    if (mode === 'button') this.bindButton(container);
    queueMicrotask(() => this.o.onReady?.());
    if (mode === 'embedded' || mode === 'invisible') this.execute().catch(() => {});
  }

  private renderBox(root: ShadowRoot): void {
    this.box = el('div', 'box');
    this.check = el('button', 'check');
    this.check.type = 'button';
    // aria-checked: setState('idle') below.
    this.check.setAttribute('role', 'checkbox');
    if (this.o.tabIndex !== undefined) this.check.tabIndex = this.o.tabIndex;
    const txt = el('span', 'txt');
    const label = el('span');
    this.label = label;
    this.status = el('span', 'status');
    txt.append(label, this.status);
    this.check.append(el('span', 'icon'), txt);
    this.check.onclick = () => {
      if (this.check?.getAttribute('aria-disabled') !== 'true')
        (this.state === 'unverified' ? this.reverify() : this.execute()).catch(() => {});
    };
    const brand = el('span', 'brand');
    brand.textContent = 'Gatehouse';
    this.box.append(this.check, brand, el('div', 'bar'));
    this.slot = el('div', 'slot');
    root.append(this.box, this.slot);
    this.setState('idle');
  }

  private bindButton(container: HTMLElement): void {
    const b = this.o.button;
    const button = (typeof b === 'string' ? document.querySelector<HTMLElement>(b) : b) ?? container;
    this.button = button;
    button.addEventListener('click', this.onButtonClick, true);
  }

  /** Button mode: a click without a token runs the verification first, then the click is replayed. */
  private onButtonClick = (event: Event): void => {
    if (this.replaying || this.token) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    this.execute().then(
      () => {
        this.replaying = true;
        try {
          this.button?.click();
        } finally {
          this.replaying = false;
        }
      },
      () => {},
    );
  };

  private setState(state: State, key?: LoaderKey): void {
    this.state = state;
    this.statusKey = key;
    // The page's scripts (and the form, by the field) can tell a real token from a client-only one.
    this.field.dataset.gatehouseState = state;
    const text = key ? this.t(key) : '';
    if (!this.box || !this.check || !this.status) return;
    // Running without a status is the user's turn (a challenge is shown): the box looks idle, no spinner.
    this.box.dataset.state = key ? state : 'idle';
    this.check.setAttribute('aria-checked', String(state === 'done'));
    const locked = state === 'expired' && this.o.refreshExpired === 'never';
    this.check.setAttribute('aria-disabled', String(state === 'running' || state === 'done' || locked));
    this.status.textContent = text;
    if (this.label)
      this.label.textContent = this.t(state === 'error' || state === 'unverified' ? 'retry' : 'verify');
    if (state !== 'running') this.box.style.removeProperty('--p');
  }

  /** What the live region says, by key, so that it is said again in the page's language once the pack is in. */
  private announce(key?: LoaderKey): void {
    this.liveKey = key;
    this.live.textContent = key ? this.t(key) : '';
  }

  execute(): Promise<string> {
    if (this.token) return Promise.resolve(this.token);
    return this.start();
  }

  /**
   * Verifies again now, even holding a token (a client-only one, or a pass token the backend could not
   * validate because the main API is down): the main API is probed briefly, then the standby hosts.
   */
  reverify(): Promise<string> {
    if (this.running) return this.running;
    this.clearToken();
    this.expired = false;
    this.route.suspectMain();
    return this.start();
  }

  private start(): Promise<string> {
    if (!this.running) {
      const running = this.run().finally(() => {
        if (this.running === running) this.running = undefined;
      });
      this.running = running;
    }
    return this.running;
  }

  private async run(): Promise<string> {
    clearTimeout(this.retryTimer);
    const abort = new AbortController();
    this.abort = abort;
    this.setState('running', 'verifying');
    this.announce('verifying');
    try {
      const passed = await verify({
        route: this.route,
        appKey: this.o.appKey,
        action: this.o.action,
        lang: this.lang,
        ...(this.o.cData ? { cdata: this.o.cData } : {}),
        signal: abort.signal,
        signals: collectSignals,
        serverToken: (fresh) => this.getServerToken(fresh),
        progress: (f) => {
          this.box?.style.setProperty('--p', String(f));
          this.view?.progress(f);
        },
        showImage: (image, submit, message, expiresIn) => this.showImage(image, submit, message, expiresIn),
      });
      if (abort.signal.aborted) throw abort.signal.reason;
      await this.pass(passed);
      return passed.token;
    } catch (error) {
      if (abort.signal.aborted && !(error instanceof GatehouseError && error.code === 'closed')) throw error;
      this.fail(error);
      throw error;
    } finally {
      if (this.abort === abort) this.abort = undefined;
    }
  }

  private async getServerToken(fresh: boolean): Promise<string | undefined> {
    const fetchToken = this.o.getServerToken;
    if (fetchToken && (fresh || !this.serverToken)) {
      try {
        this.serverToken = await fetchToken();
      } catch (error) {
        throw new GatehouseError('server_token_unavailable', `getServerToken failed: ${error}`);
      }
    }
    return this.serverToken;
  }

  private async pass(passed: Passed): Promise<void> {
    await this.view?.succeed();
    this.closeView();
    this.token = passed.token;
    this.expired = false;
    this.field.value = passed.token;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), Math.max(1, passed.expiresIn - 5) * 1000);
    if (isClientOnly(passed.token)) {
      // Nothing verified the visitor: never the success state, never onSuccess.
      this.setState('unverified', 'unverified');
      this.announce('unverified');
      this.o.onUnverified?.(passed.token);
      return;
    }
    this.setState('done', 'success');
    this.announce('success');
    this.o.onSuccess?.(passed.token);
  }

  private fail(error: unknown): void {
    this.closeView();
    this.abort?.abort();
    const e =
      error instanceof GatehouseError
        ? error
        : new GatehouseError('widget_error', String((error as Error)?.message ?? error));
    if (e.code === 'closed') {
      this.setState('idle');
      this.announce();
      this.o.onClose?.();
      return;
    }
    const key = e.code === 'network_error' || e.code === 'timeout' ? 'network' : 'failed';
    this.setState('error', key);
    this.announce(key);
    this.o.onError?.(e);
    // retry 'auto': the modes that verify by themselves try again after a failure of the network or the
    // service; a refusal of the page's configuration (4xx) waits for the user.
    const { mode, retry, retryInterval } = this.o;
    const transient = TRANSIENT.includes(e.code) || e.status >= 500;
    if (retry === 'auto' && transient && (mode === 'embedded' || mode === 'invisible')) {
      clearTimeout(this.retryTimer);
      // Never sooner than the API's Retry-After (rate_limited).
      const wait = Math.max(retryInterval, (e.retryAfter ?? 0) * 1000);
      this.retryTimer = setTimeout(() => this.execute().catch(() => {}), wait);
    }
  }

  /**
   * The token ran out: the field empties, the widget shows it and calls onExpired; then, by
   * refreshExpired, it verifies again by itself (`auto`, in the modes that run on their own), on the
   * user's click (`manual`, and `auto` in popup and button modes), or only after reset() (`never`).
   */
  private expire(): void {
    const token = this.token;
    this.clearToken();
    this.expired = true;
    this.setState('expired', 'expired');
    this.announce('expired');
    if (token) this.o.onExpired?.(token);
    const { mode, refreshExpired } = this.o;
    if (refreshExpired === 'auto' && (mode === 'embedded' || mode === 'invisible'))
      this.execute().catch(() => {});
  }

  private clearToken(): void {
    clearTimeout(this.timer);
    this.token = undefined;
    this.field.value = '';
  }

  /**
   * Shows a challenge, or replaces the shown one; settles on refresh (resolve) or close (reject). One not
   * answered within its lifetime calls onTimeout and is replaced by a new one.
   */
  private showImage(
    image: ImageChallenge,
    submit: (answer: unknown) => Promise<SubmitOutcome>,
    message?: string,
    expiresIn?: number,
  ): Promise<void> {
    if (!this.interactive) {
      this.interactive = true;
      this.o.onBeforeInteractive?.();
    }
    clearTimeout(this.challengeTimer);
    if (expiresIn)
      this.challengeTimer = setTimeout(() => {
        this.o.onTimeout?.();
        this.showing?.refresh();
      }, expiresIn * 1000);
    return new Promise((resolve, reject) => {
      // Closed while the timed-out challenge's replacement was loading (its promise had settled then).
      if (this.shut) return reject(this.shut);
      this.showing = {
        submit,
        refresh: resolve,
        close: () => {
          this.shut = new GatehouseError('closed', 'The challenge was closed.');
          reject(this.shut);
        },
      };
      if (this.view) return this.view.replace(image, message);
      this.announce('loading');
      const signal = this.abort?.signal;
      loadUi(this.route.widgetHosts()).then(
        (ui) => {
          if (signal?.aborted) return;
          const host: ChallengeHost = {
            lang: this.lang,
            theme: this.o.theme,
            presentation: this.o.mode === 'embedded' ? 'embedded' : 'popup',
            ...(this.slot ? { slot: this.slot } : {}),
            t: (key) => this.t(key),
            submit: (answer) => this.showing?.submit(answer) ?? Promise.reject(new Error('no challenge')),
            refresh: () => this.showing?.refresh(),
            close: () => this.showing?.close(),
            solve: (puzzle, progress) =>
              solvePow(puzzle, this.abort?.signal as AbortSignal, progress, this.route.widgetHosts()),
            post: (step) => {
              clearTimeout(this.challengeTimer);
              return host.submit(step);
            },
          };
          this.view = ui.mount(host, image);
          // The user's turn: neither "Verifying…" on the box nor "Loading the challenge…" in the live region.
          this.setState('running');
          this.announce();
        },
        (error) =>
          reject(new GatehouseError('ui_failed', `Cannot load the challenge: ${error?.message ?? error}`)),
      );
    });
  }

  private closeView(): void {
    clearTimeout(this.challengeTimer);
    this.view?.destroy();
    this.view = undefined;
    this.showing = this.shut = undefined;
    if (this.interactive) {
      this.interactive = false;
      this.o.onAfterInteractive?.();
    }
  }

  reset(): void {
    this.abort?.abort();
    this.abort = undefined;
    this.running = undefined;
    clearTimeout(this.retryTimer);
    this.closeView();
    this.clearToken();
    this.expired = false;
    this.setState('idle');
    this.announce();
  }

  remove(): void {
    this.reset();
    this.button?.removeEventListener('click', this.onButtonClick, true);
    this.host.remove();
    this.field.remove();
  }

  getToken(): string | undefined {
    return this.token;
  }

  getState(): State {
    return this.state;
  }

  isExpired(): boolean {
    return this.expired;
  }
}

/**
 * gatehouse.js: the loader every page includes (`<script src=".../gatehouse.js" async defer>`). It defines
 * `window.Gatehouse`, renders every element carrying `data-gatehouse-app-key`, and starts collecting the
 * behaviour summaries sent with challenge initialization. The challenge UI and the proof-of-work worker
 * are separate files, fetched only when a verification needs them.
 */

import { scriptUrl } from './chunks.ts';
import { LANGUAGES } from './i18n.ts';
import { fromDataset, type RenderOptions, type WidgetHandle } from './options.ts';
import { startSignals } from './signals.ts';
import { GatehouseError } from './transport.ts';
import { Widget } from './widget.ts';

declare const __GATEHOUSE_VERSION__: string | undefined;

const handles = new WeakMap<HTMLElement, WidgetHandle>();

/** Renders a widget into `container` (an element or a CSS selector). */
function render(container: HTMLElement | string, options: RenderOptions): WidgetHandle {
  const target = typeof container === 'string' ? document.querySelector<HTMLElement>(container) : container;
  if (!target) throw new TypeError(`Gatehouse.render: no element matches ${String(container)}.`);
  const widget = new Widget(target, options);
  handles.set(target, widget);
  return widget;
}

/** Renders every `[data-gatehouse-app-key]` element under `root` not rendered yet. */
function scan(root: ParentNode = document): WidgetHandle[] {
  const rendered: WidgetHandle[] = [];
  root.querySelectorAll<HTMLElement>('[data-gatehouse-app-key]').forEach((node) => {
    if (handles.has(node)) return;
    try {
      rendered.push(render(node, fromDataset(node)));
    } catch (error) {
      console.error(error);
    }
  });
  return rendered;
}

const Gatehouse = {
  render,
  scan,
  /** The handle of a widget rendered into `container`, e.g. by auto-render. */
  get: (container: HTMLElement) => handles.get(container),
  /**
   * Verifies again the widget rendered into `container` (an element or a selector), even if it holds a
   * token: after an `unverified` (co_) result, or when the site's backend answered that the token could
   * not be validated because the main API is down. Resolves with the new token.
   */
  reverify(container: HTMLElement | string): Promise<string> {
    const target = typeof container === 'string' ? document.querySelector<HTMLElement>(container) : container;
    const handle = target ? handles.get(target) : undefined;
    if (!handle)
      return Promise.reject(new TypeError(`Gatehouse.reverify: no widget in ${String(container)}.`));
    return handle.reverify();
  },
  languages: LANGUAGES,
  version: typeof __GATEHOUSE_VERSION__ === 'string' ? __GATEHOUSE_VERSION__ : 'dev',
  GatehouseError,
};

declare global {
  interface Window {
    Gatehouse: typeof Gatehouse;
  }
}

/**
 * Parameters of the script URL (gatehouse.js?render=explicit&onload=fn): `render=explicit` turns off the
 * rendering of `[data-gatehouse-app-key]` elements; `onload` names a global function called with
 * `Gatehouse` once the page's DOM is ready (it may be defined after the script tag).
 */
declare const __GATEHOUSE_COMPAT__: boolean | undefined;
/** In gatehouse-compat.js these parameters are the vendor's, read by src/compat/index.ts instead. */
const params =
  typeof __GATEHOUSE_COMPAT__ === 'boolean' && __GATEHOUSE_COMPAT__
    ? new URLSearchParams()
    : scriptUrl.searchParams;

function ready(): void {
  if (params.get('render') !== 'explicit') scan();
  const name = params.get('onload');
  if (!name) return;
  const fn = (window as unknown as Record<string, unknown>)[name];
  if (typeof fn === 'function') fn(Gatehouse);
  else console.error(`Gatehouse: onload=${name} names no global function.`);
}

if (!window.Gatehouse) {
  window.Gatehouse = Gatehouse;
  startSignals();
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready);
  else ready();
  document.dispatchEvent(new CustomEvent('gatehouse:load', { detail: Gatehouse }));
}

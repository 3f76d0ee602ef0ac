/**
 * `@gatehouse/web/react`: `<GatehouseWidget appKey action apiServer onSuccess … />`, a thin component over
 * `render` (README.md beside this package). Renders an empty `<div>` on the server; the widget is loaded
 * and rendered into it after mount, and removed on unmount. The callbacks may change between renders
 * without re-rendering the widget; the other options re-render it when they change.
 */
import { type CSSProperties, createElement, useEffect, useRef } from 'react';
import type { RenderOptions, WidgetHandle } from '../options.ts';
import { loadGatehouse } from './index.ts';

export interface GatehouseWidgetProps extends RenderOptions {
  /** The Gatehouse API's base URL; the widget script is loaded from it. */
  apiServer: string;
  /** A CSP nonce for the widget's script element. */
  nonce?: string;
  /** Called with the widget's handle once it is rendered (execute, reset, getToken, isExpired…). */
  onWidget?: (handle: WidgetHandle) => void;
  /** Called when the widget script cannot be loaded. */
  onLoadError?: (error: Error) => void;
  className?: string;
  style?: CSSProperties;
  id?: string;
}

const CALLBACKS = [
  'onSuccess',
  'onError',
  'onExpired',
  'onTimeout',
  'onClose',
  'onReady',
  'onBeforeInteractive',
  'onAfterInteractive',
  'getServerToken',
] as const;

export function GatehouseWidget(props: GatehouseWidgetProps) {
  const container = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  latest.current = props;
  const { className, style, id, onWidget, onLoadError, nonce, ...options } = props;
  // Re-render the widget only when a non-callback option changes.
  const key = JSON.stringify(
    Object.fromEntries(
      Object.entries(options).filter(
        ([, v]) => typeof v !== 'function' && !(v instanceof Object && 'nodeType' in v),
      ),
    ),
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for every non-callback option.
  useEffect(() => {
    let handle: WidgetHandle | undefined;
    let cancelled = false;
    const forward = Object.fromEntries(
      CALLBACKS.map((name) => [
        name,
        (...args: unknown[]) =>
          (latest.current[name] as ((...a: unknown[]) => unknown) | undefined)?.(...args),
      ]),
    );
    loadGatehouse({ apiServer: props.apiServer, ...(nonce ? { nonce } : {}) }).then(
      (api) => {
        if (cancelled || !container.current) return;
        const {
          className: _c,
          style: _s,
          id: _i,
          onWidget: _w,
          onLoadError: _e,
          nonce: _n,
          ...current
        } = latest.current;
        const present = Object.fromEntries(
          CALLBACKS.filter((name) => current[name]).map((name) => [name, forward[name]]),
        );
        handle = api.render(container.current, { ...current, ...present } as RenderOptions);
        latest.current.onWidget?.(handle);
      },
      (error: Error) => {
        if (!cancelled) latest.current.onLoadError?.(error);
      },
    );
    return () => {
      cancelled = true;
      handle?.remove();
    };
  }, [key, props.apiServer, nonce]);
  return createElement('div', { ref: container, className, style, id });
}

export default GatehouseWidget;

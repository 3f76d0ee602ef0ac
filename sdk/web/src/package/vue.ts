/**
 * `@gatehouse/web/vue`: `<GatehouseWidget app-key action api-server @success … />` for Vue 3, a thin
 * component over `render` (README.md beside this package). Renders an empty `<div>` on the server; the
 * widget is loaded and rendered into it when mounted, re-rendered when an option changes, removed when
 * unmounted. Events: success(token), error(err), expired(token), timeout, close, ready,
 * before-interactive, after-interactive, widget(handle), load-error(err).
 */
import { defineComponent, h, onBeforeUnmount, onMounted, type PropType, ref, watch } from 'vue';
import type { RefreshExpired, RenderOptions, Retry, Size, Theme, WidgetHandle } from '../options.ts';
import { loadGatehouse } from './index.ts';

export const GatehouseWidget = defineComponent({
  name: 'GatehouseWidget',
  props: {
    appKey: { type: String, required: true },
    action: { type: String, required: true },
    apiServer: { type: String, required: true },
    mode: { type: String as PropType<RenderOptions['mode']>, default: undefined },
    theme: { type: String as PropType<Theme>, default: undefined },
    size: { type: String as PropType<Size>, default: undefined },
    lang: { type: String, default: undefined },
    cData: { type: String, default: undefined },
    retry: { type: String as PropType<Retry>, default: undefined },
    retryInterval: { type: Number, default: undefined },
    refreshExpired: { type: String as PropType<RefreshExpired>, default: undefined },
    tabIndex: { type: Number, default: undefined },
    fieldName: { type: String, default: undefined },
    serverToken: { type: String, default: undefined },
    getServerToken: { type: Function as PropType<() => Promise<string>>, default: undefined },
    bypassServers: { type: [Array, String] as PropType<string[] | string>, default: undefined },
    nonce: { type: String, default: undefined },
  },
  emits: [
    'success',
    'error',
    'expired',
    'timeout',
    'close',
    'ready',
    'before-interactive',
    'after-interactive',
    'widget',
    'load-error',
  ],
  setup(props, { emit, expose }) {
    const container = ref<HTMLDivElement>();
    let handle: WidgetHandle | undefined;
    let generation = 0;
    const mount = async () => {
      const mine = ++generation;
      handle?.remove();
      handle = undefined;
      try {
        const api = await loadGatehouse({
          apiServer: props.apiServer,
          ...(props.nonce ? { nonce: props.nonce } : {}),
        });
        if (mine !== generation || !container.value) return;
        const { nonce: _n, ...options } = props;
        const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
        handle = api.render(container.value, {
          ...(defined as unknown as RenderOptions),
          onSuccess: (token) => emit('success', token),
          onError: (error) => emit('error', error),
          onExpired: (token) => emit('expired', token),
          onTimeout: () => emit('timeout'),
          onClose: () => emit('close'),
          onReady: () => emit('ready'),
          onBeforeInteractive: () => emit('before-interactive'),
          onAfterInteractive: () => emit('after-interactive'),
        });
        emit('widget', handle);
      } catch (error) {
        if (mine === generation) emit('load-error', error);
      }
    };
    onMounted(mount);
    watch(() => ({ ...props }), mount, { deep: true });
    onBeforeUnmount(() => {
      generation++;
      handle?.remove();
      handle = undefined;
    });
    expose({
      execute: () => handle?.execute() ?? Promise.reject(new Error('the widget is not rendered yet')),
      reset: () => handle?.reset(),
      getToken: () => handle?.getToken(),
      isExpired: () => handle?.isExpired() ?? false,
    });
    return () => h('div', { ref: container });
  },
});

export default GatehouseWidget;

// The Vue example: a login form with the widget (render function, no SFC compiler needed). Bundled with
// esbuild by sdk/release/test/install.test.ts.

import { GatehouseWidget } from '@gatehouse/web/vue';
import { createApp, h } from 'vue';

const config = window.GATEHOUSE_EXAMPLE; // { apiServer, appKey }

createApp({
  render: () =>
    h('form', { method: 'post', action: '/login' }, [
      h('input', { name: 'user', value: 'alice' }),
      h(GatehouseWidget, {
        apiServer: config.apiServer,
        appKey: config.appKey,
        action: 'login',
        mode: 'invisible',
        onSuccess: (token) => {
          window.exampleResult = { framework: 'vue', token };
        },
        onError: (error) => {
          window.exampleResult = { framework: 'vue', error: error.code };
        },
      }),
      h('button', { type: 'submit' }, 'Sign in'),
    ]),
}).mount('#root');

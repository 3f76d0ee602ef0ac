// The React example: a login form with the widget. Bundled with esbuild by sdk/release/test/install.test.ts.

import { GatehouseWidget } from '@gatehouse/web/react';
import { createRoot } from 'react-dom/client';

const config = window.GATEHOUSE_EXAMPLE; // { apiServer, appKey }

function LoginForm() {
  return (
    <form method="post" action="/login">
      <input name="user" defaultValue="alice" />
      <GatehouseWidget
        apiServer={config.apiServer}
        appKey={config.appKey}
        action="login"
        mode="invisible"
        onSuccess={(token) => {
          window.exampleResult = { framework: 'react', token };
        }}
        onError={(error) => {
          window.exampleResult = { framework: 'react', error: error.code };
        }}
      />
      <button type="submit">Sign in</button>
    </form>
  );
}

createRoot(document.getElementById('root')).render(<LoginForm />);

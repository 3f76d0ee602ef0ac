import { success } from '@gatehouse/core/errors';
import { type Route, route } from '../route-table.ts';
import { sendPage, styleHash } from './pages.ts';

/** Where a person (or a script) starting from the API's address goes next. */
const LINKS = [
  ['console', '/console', 'Web console: apps, settings, risk policy, usage'],
  ['docs', '/docs', 'API reference (browsable)'],
  ['openapi', '/openapi.json', 'OpenAPI 3.1 document'],
  ['widget', '/widget/gatehouse.js', 'Web widget loader'],
  ['health', '/healthz', 'Liveness'],
  ['ready', '/readyz', 'Readiness (the database answers)'],
  ['metrics', '/metrics', 'Prometheus metrics'],
] as const;

const CSS =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}' +
  'a{color:#0b57d0}li{margin:.25rem 0}code{font-size:.9em}';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>Gatehouse</h1>
<p>This is the Gatehouse verification API. Integrators call it from their pages (the widget) and their
backends (<code>/v1/validate</code>); people who run it start from here.</p>
<ul>
${LINKS.map(([, href, label]) => `<li><a href="${href}">${label}</a> <code>${href}</code></li>`).join('\n')}
</ul>
</main>
</body>
</html>
`;

/**
 * GET /: a small page for a browser, or for `Accept: application/json` (and anything that does not
 * prefer HTML, such as curl's `*\/*`) the same links as JSON.
 */
export const rootRoutes: Route[] = [
  route({
    method: 'get',
    path: '/',
    doc: false,
    handler: () =>
      function root(ctx) {
        ctx.vary('Accept');
        if (ctx.accepts('json', 'html') === 'html') {
          sendPage(ctx, PAGE, { styleHashes: [styleHash(CSS)] });
          return;
        }
        ctx.set('Cache-Control', 'no-cache');
        return success({
          service: 'gatehouse',
          links: Object.fromEntries(LINKS.map(([name, href]) => [name, href])),
        });
      },
  }),
];

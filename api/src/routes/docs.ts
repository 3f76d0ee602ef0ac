import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GatehouseError } from '@gatehouse/core/errors';
import { type Route, route } from '../route-table.ts';
import { type MemoryFile, memoryFile, sendMemoryFile, sendPage } from './pages.ts';

/**
 * GET /docs: the API reference, Swagger UI (swagger-ui-dist, from node_modules: no network at run time)
 * rendering the served /openapi.json, its operations grouped by tag, meeting WCAG 2.1 AA (axe-core finds
 * nothing: api/test/console.browser.test.ts). Its files are read once, on the first request, and kept in memory.
 */
const DIST = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Our start-up script, a file rather than inline so that the page's CSP allows no inline script. Its
 * plugin gives the page the structure assistive technology expects: the document's title block is the
 * banner landmark, and a level-2 heading leads the operation groups (their headings are level 3).
 */
const INIT = `var Landmarks = function () {
  return {
    wrapComponents: {
      InfoContainer: function (Original, system) {
        return function (props) {
          var h = system.React.createElement;
          return h('div', { role: 'banner' }, h(Original, props));
        };
      },
      operations: function (Original, system) {
        return function (props) {
          var h = system.React.createElement;
          return h('div', null, h('h2', { className: 'groups-title' }, 'Operations by group'), h(Original, props));
        };
      },
    },
  };
};
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    plugins: [Landmarks],
    url: '/openapi.json',
    dom_id: '#reference',
    // Deep links make each operation's path a link inside its expand button (nested controls).
    deepLinking: false,
    validatorUrl: null,
    tryItOutEnabled: false,
    defaultModelsExpandDepth: 0,
    // The highlighter's colours (inline styles) fall short of AA contrast on its dark background.
    syntaxHighlight: { activated: false },
  });
});
`;

/**
 * Swagger UI's colours where its own fall short of WCAG AA contrast (4.5:1): white method badges on
 * light greens and blues, the version badges, the document URL and the Authorize button. Its example
 * blocks grow and wrap instead of scrolling: a scrolling block holds nothing focusable, so a keyboard
 * could not scroll it (axe: scrollable-region-focusable).
 */
const CONTRAST = `.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #0f7a4c; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1f5fa8; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #a35400; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b3261e; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0e6f60; }
.swagger-ui .opblock.opblock-head .opblock-summary-method,
.swagger-ui .opblock.opblock-options .opblock-summary-method { background: #5c3d99; }
.swagger-ui .info .title small { background: #5b6270; }
.swagger-ui .info .title small.version-stamp { background: #3b6e00; }
.swagger-ui .info .title small pre { color: #ffffff; }
.swagger-ui .info .base-url, .swagger-ui .info a.link .url, .swagger-ui .url { color: #1f5fa8; }
.swagger-ui .btn.authorize { color: #0f7a4c; border-color: #0f7a4c; }
.swagger-ui .btn.authorize svg { fill: #0f7a4c; }
.swagger-ui .highlight-code > .microlight { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
.swagger-ui .groups-title { font-family: sans-serif; font-size: 1.4rem; margin: 1.5rem 0 0.5rem; color: #3b4151; }
`;

const ASSETS: Record<string, { type: string; load: () => Buffer }> = {
  'swagger-ui.css': { type: 'text/css', load: () => readFileSync(join(DIST, 'swagger-ui.css')) },
  'swagger-ui-bundle.js': {
    type: 'application/javascript',
    load: () => readFileSync(join(DIST, 'swagger-ui-bundle.js')),
  },
  'init.js': { type: 'application/javascript', load: () => Buffer.from(INIT) },
  'docs.css': { type: 'text/css', load: () => Buffer.from(CONTRAST) },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/docs.css">
</head>
<body>
<div id="reference"><noscript>The reference needs JavaScript; the raw document is at <a href="/openapi.json">/openapi.json</a>.</noscript></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

const loaded = new Map<string, MemoryFile>();

export const docsRoutes: Route[] = [
  route({
    method: 'get',
    path: '/docs',
    doc: false,
    handler: () =>
      function docs(ctx) {
        // Swagger UI's icons are data: SVGs in its stylesheet.
        sendPage(ctx, PAGE, { imgData: true });
      },
  }),
  route({
    method: 'get',
    path: '/docs/assets/{file}',
    doc: false,
    handler: () =>
      function docsAsset(ctx) {
        const name = ctx.params.file ?? '';
        const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
        if (!asset) throw new GatehouseError('not_found');
        let file = loaded.get(name);
        if (!file) {
          file = memoryFile(asset.load(), asset.type);
          loaded.set(name, file);
        }
        sendMemoryFile(ctx, file, 'public, max-age=3600');
      },
  }),
];

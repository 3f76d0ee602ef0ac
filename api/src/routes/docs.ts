import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GatehouseError } from '@gatehouse/core/errors';
import type Router from '@koa/router';
import { type MemoryFile, memoryFile, sendMemoryFile, sendPage } from './pages.ts';

/**
 * GET /docs: the API reference, Swagger UI (swagger-ui-dist, from node_modules: no network at run time)
 * rendering the served /openapi.json. Its files are read once, on the first request, and kept in memory.
 */
const DIST = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Our start-up script, a file rather than inline so that the page's CSP allows no inline script. */
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    defaultModelsExpandDepth: 0,
  });
});
`;

const ASSETS: Record<string, { type: string; load: () => Buffer }> = {
  'swagger-ui.css': { type: 'text/css', load: () => readFileSync(join(DIST, 'swagger-ui.css')) },
  'swagger-ui-bundle.js': {
    type: 'application/javascript',
    load: () => readFileSync(join(DIST, 'swagger-ui-bundle.js')),
  },
  'init.js': { type: 'application/javascript', load: () => Buffer.from(INIT) },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<main id="reference"><noscript>The reference needs JavaScript; the raw document is at <a href="/openapi.json">/openapi.json</a>.</noscript></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

const loaded = new Map<string, MemoryFile>();

export function docsRoutes(router: Router): void {
  router.get('/docs', function docs(ctx) {
    // Swagger UI's icons are data: SVGs in its stylesheet.
    sendPage(ctx, PAGE, { imgData: true });
  });
  router.get('/docs/assets/:file', function docsAsset(ctx) {
    const name = ctx.params.file ?? '';
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) throw new GatehouseError('not_found');
    let file = loaded.get(name);
    if (!file) {
      file = memoryFile(asset.load(), asset.type);
      loaded.set(name, file);
    }
    sendMemoryFile(ctx, file, 'public, max-age=3600');
  });
}

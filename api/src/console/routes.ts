import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { GatehouseError } from '@gatehouse/core/errors';
import { type Route, route } from '../route-table.ts';
import { type MemoryFile, memoryFile, sendMemoryFile, sendPage } from '../routes/pages.ts';

/**
 * GET /console: the web console, a single page (Preact + htm, uPlot charts) bundled by esbuild from
 * `ui/` on the first request and kept in memory; everything it loads comes from this server, and the CSP
 * allows no inline script. It signs in by exchanging the admin token for a session cookie
 * (session-routes.ts) and reads everything through the admin API.
 */
const require = createRequire(import.meta.url);
const UI = join(import.meta.dirname, 'ui');

type Asset = MemoryFile;
const asset = memoryFile;

let built: Promise<Map<string, Asset>> | undefined;

/** Bundles the console once per process; a failed build is retried on the next request. */
export function consoleAssets(): Promise<Map<string, Asset>> {
  built ??= build().catch((error) => {
    built = undefined;
    throw error;
  });
  return built;
}

async function build(): Promise<Map<string, Asset>> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [join(UI, 'main.ts')],
    bundle: true,
    format: 'esm',
    minify: true,
    target: 'es2022',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const js = result.outputFiles[0]!.contents;
  return new Map([
    ['console.js', asset(Buffer.from(js), 'application/javascript')],
    ['console.css', asset(readFileSync(join(UI, 'console.css')), 'text/css')],
    ['uplot.css', asset(readFileSync(require.resolve('uplot/dist/uPlot.min.css')), 'text/css')],
  ]);
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse console</title>
<link rel="stylesheet" href="/console/assets/uplot.css">
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/console.js"></script>
</head>
<body>
<div id="console"><noscript>The console needs JavaScript. The admin API is documented at <a href="/docs">/docs</a>.</noscript></div>
</body>
</html>
`;

export const consoleRoutes: Route[] = [
  route({
    method: 'get',
    path: '/console',
    doc: false,
    handler: () =>
      function consolePage(ctx) {
        sendPage(ctx, PAGE);
      },
  }),
  route({
    method: 'get',
    path: '/console/assets/{file}',
    doc: false,
    handler: () =>
      async function consoleAsset(ctx) {
        const file = (await consoleAssets()).get(ctx.params.file ?? '');
        if (!file) throw new GatehouseError('not_found');
        sendMemoryFile(ctx, file, 'no-cache');
      },
  }),
];

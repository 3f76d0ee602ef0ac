/**
 * First-load bytes on the wire, measured in Chromium against a live API: a page on its own origin
 * includes `{API}/widget/gatehouse.js` (served precompressed by api/src/routes/widget.ts) and renders an
 * invisible widget; every response is counted as the browser received it (headers + encoded body,
 * Chromium's own figure), the proof-of-work worker included (it is fetched from inside the Worker).
 *
 *   node sdk/web/test/wire.ts          prints the figures; exits 1 when a budget is broken
 *   node sdk/web/test/wire.ts --json
 *
 * Budgets: the loader at most 10 KB, the invisible tier's first load (loader + worker) at most
 * 30 KB; with no puzzle in the answer (degraded, or an image-only policy) no proof-of-work code at all.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext } from 'playwright-core';

export const LOADER_WIRE_BUDGET = 10 * 1024;
export const INVISIBLE_WIRE_BUDGET = 30 * 1024;

export interface WireFile {
  /** The path on the API (`/widget/gatehouse.js`, `/v1/challenge/init`...). */
  path: string;
  /** Bytes received: response headers plus the (compressed) body. */
  bytes: number;
  encoding: string;
}

export interface WireLoad {
  files: WireFile[];
  /** The widget's own files (/widget/*): what the budgets are about. */
  widgetBytes: number;
  /** Everything, the API's JSON answers included. */
  totalBytes: number;
  token: string | undefined;
}

/** Serves one HTML page on its own origin (the integrator's site). */
async function site(html: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(html);
  }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/**
 * Loads a page with an invisible widget for `appKey` in a fresh context (empty cache) and records
 * every response from the API until the widget reports success or an error.
 */
export async function measureFirstLoad(browser: Browser, apiUrl: string, appKey: string): Promise<WireLoad> {
  const page = await site(`<!doctype html><html lang="en"><head><title>wire</title>
<script src="${apiUrl}/widget/gatehouse.js" async></script></head><body><form><div id="c"></div></form>
<script>
document.addEventListener('gatehouse:load', () => Gatehouse.render('#c', { appKey: ${JSON.stringify(appKey)},
  action: 'login', mode: 'invisible', retry: 'never',
  onSuccess: (t) => { window.result = { token: t }; }, onError: (e) => { window.result = { error: e.code }; } }));
</script></body></html>`);
  let context: BrowserContext | undefined;
  try {
    context = await browser.newContext();
    const files: WireFile[] = [];
    const pending: Array<Promise<void>> = [];
    // Playwright reports the requests of dedicated workers too (the proof-of-work's importScripts).
    context.on('requestfinished', (request) => {
      if (!request.url().startsWith(apiUrl)) return;
      pending.push(
        (async () => {
          const [sizes, response] = await Promise.all([request.sizes(), request.response()]);
          files.push({
            path: new URL(request.url()).pathname,
            bytes: sizes.responseHeadersSize + sizes.responseBodySize,
            encoding: (await response?.headerValue('content-encoding')) ?? 'identity',
          });
        })(),
      );
    });
    const pageObj = await context.newPage();
    await pageObj.goto(page.url);
    await pageObj.waitForFunction(() => (window as unknown as { result?: unknown }).result, null, {
      timeout: 120_000,
    });
    await Promise.all(pending);
    const result = await pageObj.evaluate(() => (window as unknown as { result: { token?: string } }).result);
    const list = files;
    const widgetBytes = list.filter((f) => f.path.startsWith('/widget/')).reduce((n, f) => n + f.bytes, 0);
    return {
      files: list,
      widgetBytes,
      totalBytes: list.reduce((n, f) => n + f.bytes, 0),
      token: result.token,
    };
  } finally {
    await context?.close();
    await new Promise((r) => page.server.close(r));
  }
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { startTestApi } = await import('@gatehouse/api/testing');
  const { launchChromium } = await import('./browser.ts');
  const api = await startTestApi();
  const browser = await launchChromium();
  try {
    const invisible = await api.createApp({ name: 'wire', test_mode: true });
    const degraded = await api.createApp({ name: 'wire-degraded', monthly_quota: 0 });
    const withPow = await measureFirstLoad(browser, api.url, invisible.appKey);
    const noPuzzle = await measureFirstLoad(browser, api.url, degraded.appKey);
    const loader = withPow.files.find((f) => f.path === '/widget/gatehouse.js');
    const ok =
      !!loader &&
      loader.bytes <= LOADER_WIRE_BUDGET &&
      withPow.widgetBytes <= INVISIBLE_WIRE_BUDGET &&
      !noPuzzle.files.some((f) => f.path.includes('gatehouse-pow'));
    if (process.argv.includes('--json')) {
      console.log(JSON.stringify({ invisible: withPow, noPuzzle, ok }, null, 2));
    } else {
      console.log('First load in Chromium, on the wire (headers + encoded body)\n');
      for (const f of withPow.files)
        console.log(`  ${f.path.padEnd(40)} ${f.encoding.padEnd(9)} ${kb(f.bytes)}`);
      console.log(
        `\ninvisible tier: widget ${kb(withPow.widgetBytes)} (budget ${kb(INVISIBLE_WIRE_BUDGET)}), with the API's answers ${kb(withPow.totalBytes)}`,
      );
      console.log(`loader: ${kb(loader?.bytes ?? 0)} (budget ${kb(LOADER_WIRE_BUDGET)})`);
      console.log(
        `no puzzle (degraded answer): widget ${kb(noPuzzle.widgetBytes)}, files: ${noPuzzle.files.map((f) => f.path).join(', ')}`,
      );
      console.log(ok ? '\nwithin budget' : '\nOVER BUDGET');
    }
    if (!ok) process.exitCode = 1;
  } finally {
    await browser.close();
    await api.close();
  }
}

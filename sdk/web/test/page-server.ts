import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The integrator's site for browser tests and screenshots, on its own origin (another port than the
 * API): serves the built widget, a login form, a backend route that issues server tokens with the app
 * secret, and proxies /v1/* to the API so a page can also use the default `apiServer` (the origin the
 * widget was loaded from).
 */
export interface PageServer {
  url: string;
  /** Serves `html` at `path`; returns its full URL. */
  page(path: string, html: string): string;
  close(): Promise<void>;
}

export interface PageServerOptions {
  /** Directory holding gatehouse.js and its chunks. */
  widgetDir: string;
  apiUrl: string;
  /** App credentials per app key, for the server-token route. */
  secrets: Map<string, string>;
}

/** The login form every test page shows; `body` goes inside the form, before the submit button. */
export function formPage(body: string, head = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Login</title>
<style>body{font:16px system-ui;margin:24px}form{display:grid;gap:12px;max-width:360px}</style>${head}
<script src="/widget/gatehouse.js" async defer></script></head>
<body><form id="login" method="post" action="/submit"><label>User <input name="user" value="alice"></label>
${body}<button id="go" type="submit">Log in</button></form></body></html>`;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Answers a request it knows (true), or leaves it to the site's pages (false). */
export type SiteRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

/**
 * A site for browser tests on 127.0.0.1 (a free port): `route` first, then the pages set with `page()`
 * (as `pageType`, never cached), anything else 404; an error thrown while answering is a 500.
 */
export async function startTestSite(route: SiteRoute, pageType: string): Promise<PageServer> {
  const pages = new Map<string, string>();
  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (await route(req, res, url)) return;
      if (pages.has(url.pathname)) {
        res.writeHead(200, { 'content-type': pageType, 'cache-control': 'no-store' });
        res.end(pages.get(url.pathname));
      } else {
        res.writeHead(404).end('not found');
      }
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    page(path, html) {
      pages.set(path, html);
      return url + path;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html' };

export async function startPageServer(options: PageServerOptions): Promise<PageServer> {
  return startTestSite(async (req, res, url) => {
    if (url.pathname.startsWith('/widget/')) {
      const file = url.pathname.slice('/widget/'.length);
      if (!/^[\w.-]+\.js$/.test(file)) throw new Error('bad file');
      res.writeHead(200, { 'content-type': TYPES['.js'] as string, 'cache-control': 'no-store' });
      res.end(readFileSync(join(options.widgetDir, file)));
    } else if (url.pathname.startsWith('/v1/')) {
      // The widget's default API server is this origin: forward to the API as a reverse proxy would.
      const headers: Record<string, string> = {};
      for (const name of [
        'content-type',
        'user-agent',
        'accept-language',
        'sec-ch-ua',
        'sec-ch-ua-mobile',
        'sec-ch-ua-platform',
        'referer',
      ]) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const answer = await fetch(options.apiUrl + url.pathname, {
        method: req.method,
        headers,
        ...(body ? { body: new Uint8Array(body) } : {}),
      });
      res.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/json',
      });
      res.end(Buffer.from(await answer.arrayBuffer()));
    } else if (url.pathname === '/backend/server-token') {
      // The integrator's backend: issues a server token with the app secret (never sent to the browser).
      const appKey = url.searchParams.get('app') ?? '';
      const answer = await fetch(`${options.apiUrl}/v1/server/challenge/issue`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-app-key': appKey,
          'x-app-secret': options.secrets.get(appKey) ?? '',
        },
        body: new URLSearchParams({ action: url.searchParams.get('action') ?? 'login' }).toString(),
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(await answer.text());
    } else if (url.pathname === '/submit') {
      // Echoes the posted form, so a test sees what the integrator's backend would receive.
      const form = Object.fromEntries(new URLSearchParams((await readBody(req)).toString()));
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><pre id="posted">${JSON.stringify(form)}</pre>`);
    } else {
      return false;
    }
    return true;
  }, 'text/html');
}

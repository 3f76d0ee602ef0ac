import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gatehouse } from '@gatehouse/node';
import type { Logger } from 'pino';
import { handleLogin } from './login.ts';
import { loginPage, preferredLanguage, resultPage } from './pages.ts';

/**
 * The demo site: a login form protected by the widget, whose backend validates the token with the Node
 * server SDK as any integrator's would. Plain node:http, so it shares nothing with the API but HTTP.
 */

export interface DemoOptions {
  host: string;
  port: number;
  /** The API as this backend reaches it (validation). */
  apiUrl: string;
  /** The API as the browser reaches it (the widget script); default `apiUrl`. */
  publicApiUrl?: string | undefined;
  appKey: string;
  appSecret: string;
  /** The standby (bypass) hosts as the browser reaches them: the widget's embed falls back to them. */
  standbyUrls?: string[];
  /** The fallback (fallbackapiv1.) hosts this backend validates offline_ tokens at; default: discovered. */
  backupUrls?: string[];
  logger?: Logger;
}

export interface DemoServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const BODY_LIMIT = 16 * 1024;

export function createDemoServer(options: DemoOptions): Server {
  const gatehouse = new Gatehouse({
    appKey: options.appKey,
    appSecret: options.appSecret,
    baseUrl: options.apiUrl,
    ...(options.backupUrls?.length ? { backupServers: options.backupUrls } : {}),
  });
  const page = (acceptLanguage: string | undefined) =>
    loginPage({
      apiUrl: options.publicApiUrl ?? options.apiUrl,
      appKey: options.appKey,
      ...(options.standbyUrls ? { standbyUrls: options.standbyUrls } : {}),
      lang: preferredLanguage(acceptLanguage),
    });

  return createServer(async function demo(req, res) {
    try {
      const path = new URL(req.url ?? '/', 'http://demo').pathname;
      if (req.method === 'GET' && path === '/') return redirect(res, '/login');
      if ((req.method === 'GET' || req.method === 'HEAD') && path === '/login')
        return send(res, 200, page(req.headers['accept-language']));
      if (path === '/favicon.ico') return send(res, 204, '', 'text/plain');
      if (req.method === 'GET' && path === '/healthz')
        return send(res, 200, '{"status":"ok"}', 'application/json');
      if (req.method === 'POST' && path === '/login') {
        const form = await readForm(req);
        if (!form) return send(res, 415, 'Send the form as application/x-www-form-urlencoded.', 'text/plain');
        const result = await handleLogin(gatehouse, form, req.socket.remoteAddress);
        options.logger?.info({ outcome: result.outcome, action: result.verdict?.action }, 'demo login');
        return send(res, result.status, resultPage(result));
      }
      if (path === '/login' || path === '/') return send(res, 405, 'Method not allowed.', 'text/plain');
      return send(res, 404, 'Not found.', 'text/plain');
    } catch (error) {
      if ((error as { status?: number }).status === 413)
        return send(res, 413, 'Request too large.', 'text/plain');
      options.logger?.error({ err: error }, 'demo request failed');
      if (!res.headersSent) send(res, 500, 'Internal error.', 'text/plain');
    }
  });
}

/** Starts the demo site; resolves once it listens. */
export async function startDemoServer(options: DemoOptions): Promise<DemoServer> {
  const server = createDemoServer(options);
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    server,
    close() {
      closing ??= (async () => {
        const closed = once(server, 'close').catch(() => {});
        server.close();
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), 5_000);
        await closed;
        clearTimeout(force);
      })();
      return closing;
    },
  };
}

function send(res: ServerResponse, status: number, body: string, type = 'text/html; charset=utf-8'): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'strict-origin-when-cross-origin',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Content-Length': 0 });
  res.end();
}

/** The urlencoded form body, at most BODY_LIMIT bytes; null for another content type. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw Object.assign(new Error('body too large'), { status: 413 });
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Authorize } from './metrics-auth.ts';

export type Check = () => { ok: boolean; detail?: unknown };

export interface Endpoints {
  url: string;
  close(): Promise<void>;
}

/**
 * One small HTTP listener for probes or metrics, apart from everything else (controller-runtime's
 * habit: health on :8081, metrics on :8080). Each route answers 200 when its check passes, else 503.
 * With `authorize`, every route of the listener answers only the requests it lets through.
 */
export async function serveEndpoints(
  port: number,
  host: string,
  routes: Record<string, Check | (() => Promise<{ contentType: string; body: string }>)>,
  options: { authorize?: Authorize } = {},
): Promise<Endpoints> {
  const server: Server = createServer(async (req, res) => {
    const route = routes[(req.url ?? '/').split('?')[0] as string];
    if (!route || req.method !== 'GET') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    try {
      const verdict = options.authorize ? await options.authorize(req) : 200;
      if (verdict !== 200) {
        const headers: Record<string, string> = { 'content-type': 'text/plain' };
        if (verdict === 401) headers['www-authenticate'] = 'Bearer';
        const why = { 401: 'unauthorized', 403: 'forbidden', 503: 'cannot check the token now' }[verdict];
        res.writeHead(verdict, headers).end(`${why}\n`);
        return;
      }
      const result = await route();
      if ('contentType' in result) {
        res.writeHead(200, { 'content-type': result.contentType }).end(result.body);
      } else {
        res.writeHead(result.ok ? 200 : 503, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            status: result.ok ? 'ok' : 'failing',
            ...(result.detail ? { detail: result.detail } : {}),
          }),
        );
      }
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`);
    }
  });
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

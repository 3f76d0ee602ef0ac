import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';

/**
 * A round-robin HTTP proxy in front of one region's API instances (what the region's Service does in
 * Kubernetes). An upstream that refuses the connection is skipped for this request; when none answers,
 * 502 with the error envelope (a 5xx: clients and standby probes see the region down).
 */
export async function startProxy(host: string, port: number, upstreams: () => number[]): Promise<Server> {
  let next = 0;
  const server = createServer(async function roundRobin(req, res) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const ports = upstreams();
    for (let i = 0; i < ports.length; i++) {
      const upstream = ports[(next + i) % ports.length]!;
      const ok = await new Promise<boolean>((done) => {
        const out = request(
          { host, port: upstream, method: req.method, path: req.url, headers: req.headers, timeout: 10_000 },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
            up.on('end', () => done(true));
            up.on('error', () => {
              res.destroy();
              done(true);
            });
          },
        );
        // Connection refused or reset before an answer: try the next instance (requests are retried only
        // when nothing was answered, so at most the request was never seen or died with its instance).
        out.on('error', () => done(res.headersSent));
        out.on('timeout', () => out.destroy());
        out.end(body);
      });
      if (ok) {
        next = (next + i + 1) % ports.length;
        return;
      }
    }
    res.writeHead(502, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ code: -1, error: 'bad_gateway', message: 'No API instance of this region answered.' }),
    );
  });
  server.keepAliveTimeout = 5000;
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

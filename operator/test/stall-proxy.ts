import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy that can stall: what a network partition or a hung apiserver looks like to a client.
 * `stall()` stops moving bytes both ways while every connection stays open (no FIN, no RST), and new
 * connections are accepted but not forwarded, so calls hang until the client's own deadline ends
 * them. `resume()` lets the held bytes through. TLS passes through untouched (the apiserver's
 * certificate names 127.0.0.1, which is where the proxy listens).
 */
export interface StallProxy {
  /** `https://127.0.0.1:<port>` for a TLS upstream. */
  url: string;
  port: number;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startStallProxy(upstreamHost: string, upstreamPort: number): Promise<StallProxy> {
  const sockets = new Set<Socket>();
  /** Bytes read while stalled, and connections accepted while stalled: delivered on resume, in order. */
  const held: (() => void)[] = [];
  let stalled = false;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  // Manual forwarding rather than pipe(): pipe() resumes a paused source on the destination's drain.
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      if (stalled) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
    from.on('close', () => {
      if (stalled) held.push(() => to.destroy());
      else to.destroy();
    });
  };
  const server: Server = createServer((client) => {
    track(client);
    const open = () => {
      if (client.destroyed) return;
      const upstream = connect(upstreamPort, upstreamHost);
      track(upstream);
      forward(client, upstream);
      forward(upstream, client);
      client.resume();
    };
    client.pause();
    if (stalled) held.push(open);
    else open();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const deliver of held.splice(0)) deliver();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}

import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * Ports for the failover drill. The drill's child processes are the local stack's own (`Child` and
 * `waitUntilReady` in loadtest/stack/processes.ts): one helper for running Gatehouse's entry points.
 */

/** A port that was free a moment ago (bound to 0, read, released): the drill needs fixed ports across restarts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDatabaseUnavailable } from '@gatehouse/core/db';
import { internalListener, listenHttp } from '@gatehouse/core/http';
import { createApp } from './app.ts';
import { bootstrap, type Runtime } from './bootstrap.ts';
import { type Config, loadConfig } from './config.ts';
import { purgeExpired } from './retention.ts';
import { writeServerFile } from './server-file.ts';

export interface ApiServer {
  /** Where it listens, with the port actually bound (PORT=0 picks a free one). */
  url: string;
  /** The internal listener (INTERNAL_PORT: /metrics, /internal/*), when configured. */
  internalUrl: string | undefined;
  server: Server;
  runtime: Runtime;
  /** Stops accepting, lets requests in flight finish (at most `graceMs`), then releases the database. */
  close(graceMs?: number): Promise<void>;
  /**
   * From now on every answer closes its connection (`Connection: close`), on both listeners: a kept-alive
   * client opens a new connection for its next request, which lands elsewhere once this instance is out
   * of rotation, instead of meeting the socket `close` shuts.
   */
  drain(): void;
}

/** Starts the main API: dependencies, listening, periodic clean-up. `start.ts` and the entry below use it. */
export async function startApiServer(config: Config): Promise<ApiServer> {
  const runtime = await bootstrap(config);
  const callback = createApp(runtime).callback();
  let server: Server;
  let internal: Server | undefined;
  try {
    server = await listenHttp(callback, config.port, config.host, config.http);
  } catch (error) {
    await runtime.close();
    throw error;
  }
  // /metrics and /internal/* get a listener no Ingress routes to (internal-endpoints.ts).
  if (config.internal.port !== undefined) {
    try {
      internal = await listenHttp(internalListener(callback), config.internal.port, config.host, config.http);
    } catch (error) {
      server.close();
      await runtime.close();
      throw error;
    }
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${urlHost(config.host)}:${port}`;
  // Where the `gatehouse` command run beside this server finds it (docs/cli.md).
  const removeServerFile = writeServerFile(config.dataDir, url, (err) =>
    runtime.logger.warn({ err }, 'could not write DATA_DIR/server.json: the gatehouse command needs --url'),
  );
  const internalUrl = internal
    ? `http://${urlHost(config.host)}:${(internal.address() as AddressInfo).port}`
    : undefined;
  runtime.logger.info({ url, internalUrl, database: runtime.database.kind }, 'gatehouse api listening');

  const purge = setInterval(() => {
    purgeExpired(runtime.db).catch((err) => {
      // A lost database is reported once by the requests and probes that meet it, not every minute here.
      if (!isDatabaseUnavailable(err)) runtime.logger.warn({ err }, 'purging expired rows failed');
    });
  }, 60_000);
  purge.unref();

  let closing: Promise<void> | undefined;
  let draining = false;
  return {
    url,
    internalUrl,
    server,
    runtime,
    drain() {
      if (draining) return;
      draining = true;
      for (const listener of [server, internal])
        listener?.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
    },
    close(graceMs = 10_000) {
      closing ??= (async () => {
        clearInterval(purge);
        removeServerFile();
        if (internal) {
          internal.close();
          internal.closeAllConnections();
        }
        const closed = once(server, 'close').catch(() => {});
        server.close();
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(force);
        await runtime.close();
      })();
      return closing;
    },
  };
}

/** A listen address as a URL host: IPv6 in brackets, the wildcard addresses as loopback (for a local browser). */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * `node api/src/server.ts`: the main API alone, stopped gracefully by SIGINT or SIGTERM. SIGTERM is how a
 * platform stops an instance it is taking out of rotation (a pod deleted, a rolling update), which takes a
 * moment to reach every node and load balancer: for SHUTDOWN_DRAIN_MS the API keeps answering, each answer
 * closing its connection, before it stops listening. SIGINT (a person at a terminal) stops at once.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const api = await startApiServer(config);
  if (process.stdout.isTTY || process.env.GATEHOUSE_PRINT_URLS) {
    console.log(`Gatehouse API:  ${api.url}   (database: ${api.runtime.database.kind})`);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const drainMs = signal === 'SIGTERM' ? config.shutdownDrainMs : 0;
    api.runtime.logger.info({ signal, drainMs }, 'shutting down');
    const force = setTimeout(() => process.exit(1), drainMs + 15_000);
    force.unref();
    if (drainMs > 0) {
      api.drain();
      await new Promise((done) => setTimeout(done, drainMs));
    }
    await api.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

if (import.meta.main) await main();

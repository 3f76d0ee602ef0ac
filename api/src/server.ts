import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import { bootstrap } from './bootstrap.ts';
import { loadConfig } from './config.ts';
import { purgeExpiredPassTokens } from './tokens/pass-tokens.ts';

/** Starts the main API: configuration, dependencies, listening, periodic clean-up, graceful shutdown. */
const config = loadConfig();
const runtime = await bootstrap(config);
const server = createApp(runtime).listen(config.port, config.host);
await once(server, 'listening');
const { port } = server.address() as AddressInfo;
runtime.logger.info(
  { url: `http://${config.host}:${port}`, database: runtime.database.kind },
  'gatehouse api listening',
);
if (process.stdout.isTTY || process.env.GATEHOUSE_PRINT_URLS) {
  console.log(`Gatehouse API:  http://${config.host}:${port}   (database: ${runtime.database.kind})`);
}

const purge = setInterval(() => {
  purgeExpiredPassTokens(runtime.db).catch((err) =>
    runtime.logger.warn({ err }, 'purging expired tokens failed'),
  );
}, 60_000);
purge.unref();

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  runtime.logger.info({ signal }, 'shutting down');
  clearInterval(purge);
  server.close();
  server.closeIdleConnections();
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  await once(server, 'close').catch(() => {});
  await runtime.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

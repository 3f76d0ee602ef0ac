import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { serveCommands } from './child-ipc.ts';
import type { Ready } from './protocol.ts';

/** Bench child: the baseline, a bare Koa app answering every request with a small JSON body. */
const app = new Koa();
app.use(async function answer(ctx) {
  ctx.body = { code: 0, data: { valid: true } };
});
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');

serveCommands(
  async (command) => {
    throw new Error(`unknown command ${command.type}`);
  },
  async () => {
    server.closeAllConnections();
    server.close();
  },
);
process.send?.({
  type: 'ready',
  port: (server.address() as AddressInfo).port,
  database: 'none',
} satisfies Ready);

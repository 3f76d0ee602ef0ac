import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import postgres from 'postgres';
import { serveCommands } from './child-ipc.ts';
import type { Ready } from './protocol.ts';

/**
 * Bench child: the baselines. Without DATABASE_URL, a bare Koa app answering every request with a small
 * JSON body. With it, the same app making one postgres.js round trip per request, an UPDATE ... RETURNING
 * of one row by primary key (what a validation does, with nothing else around it).
 */
const ROWS = 1000;
const url = process.env.DATABASE_URL;
const sql = url ? postgres(url, { max: 10, onnotice: () => {} }) : undefined;
if (sql) {
  await sql`create table if not exists bench_baseline (id int primary key, n int not null)`;
  await sql`insert into bench_baseline select g, 0 from generate_series(1, ${ROWS}) g on conflict do nothing`;
}

const app = new Koa();
app.use(async function answer(ctx) {
  if (sql) {
    const id = 1 + Math.floor(Math.random() * ROWS);
    const [row] = await sql`update bench_baseline set n = n + 1 where id = ${id} returning id, n`;
    ctx.body = { code: 0, data: { valid: true, n: row?.n } };
  } else {
    ctx.body = { code: 0, data: { valid: true } };
  }
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
    await sql?.end({ timeout: 1 });
  },
);
process.send?.({
  type: 'ready',
  port: (server.address() as AddressInfo).port,
  database: sql ? 'postgres' : 'none',
} satisfies Ready);

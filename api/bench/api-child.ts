import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.ts';
import { appSettings } from '../src/apps/settings.ts';
import { bootstrap } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { mintPassToken, validatePassToken } from '../src/tokens/pass-tokens.ts';
import { serveCommands } from './child-ipc.ts';
import type { Command, CreatedApp, Ready } from './protocol.ts';

/**
 * Bench child: the real API, built as `src/server.ts` builds it (configuration from the environment,
 * bootstrap, createApp, listen), plus the bench's commands to create apps and mint tokens with the API's
 * own runtime. PGlite lives inside this process, so the tokens can only be minted here.
 */
const runtime = await bootstrap(loadConfig());
const server = createApp(runtime).listen(0, '127.0.0.1');
await once(server, 'listening');

/** Runs `task` over 0..count-1 with at most `width` in flight; results in order. */
async function pool<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

async function extra(command: Command): Promise<unknown> {
  if (command.type === 'create-app') {
    const { app, secret } = await runtime.apps.create(
      appSettings.parse({ name: `bench-${command.plan}`, plan: command.plan, pass_token_ttl: 3600 }),
    );
    return { appId: app.id, appKey: app.appKey, appSecret: secret } satisfies CreatedApp;
  }
  if (command.type === 'mint') {
    const app = await runtime.apps.findById(command.appId);
    if (!app) throw new Error(`no app ${command.appId}`);
    const solvedAt = Math.floor(Date.now() / 1000);
    return pool(command.count, 16, async (i) => {
      const token = await mintPassToken(runtime.db, runtime.keys, {
        app,
        challengeId: `ch_bench_${i}`,
        action: 'login',
        captchaArgs: {
          platform: 'web',
          user_ip: '203.0.113.7',
          referer: 'https://shop.example/login',
          pkg: null,
          solved_at: solvedAt,
          risk_score: 10,
        },
      });
      if (command.consume) await validatePassToken(runtime.db, runtime.keys, app, token);
      return token;
    });
  }
  throw new Error(`unknown command ${command.type}`);
}

serveCommands(extra, async () => {
  server.closeAllConnections();
  server.close();
  await runtime.close();
});
process.send?.({
  type: 'ready',
  port: (server.address() as AddressInfo).port,
  database: runtime.database.kind,
} satisfies Ready);

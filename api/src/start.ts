import { resolve } from 'node:path';
import { loadConfig } from './config.ts';
import { loadDemoConfig } from './demo/config.ts';
import { DEMO_APP_FILE, ensureDemoApp } from './demo/demo-app.ts';
import { DEMO_USER } from './demo/login.ts';
import { startDemoServer } from './demo/server.ts';
import { ensureWidget } from './routes/widget.ts';
import { type ApiServer, startApiServer } from './server.ts';

/**
 * `npm start`: everything a developer needs on one machine, started in order as a list of roles (the main
 * API, then the demo site; the standby roles of issue 4 join the list), each printing its URLs. One Ctrl-C
 * (or SIGTERM) stops them all gracefully, in reverse order.
 */

interface Running {
  /** Label and URL (or path) lines for the banner. */
  lines: [string, string][];
  close(): Promise<void>;
}

interface Shared {
  api?: ApiServer;
}

interface Role {
  name: string;
  start(shared: Shared): Promise<Running>;
}

const config = loadConfig();
const demoConfig = loadDemoConfig();

const ROLES: Role[] = [
  {
    name: 'api',
    async start(shared) {
      const api = await startApiServer(config);
      shared.api = api;
      try {
        await ensureWidget(api.runtime.logger);
      } catch (error) {
        api.runtime.logger.error(
          { err: error },
          'the web widget is unavailable: the demo page cannot verify',
        );
      }
      const adminToken = config.adminToken
        ? 'from GATEHOUSE_ADMIN_TOKEN'
        : resolve(config.dataDir, 'admin-token');
      return {
        lines: [
          ['API', `${api.url}   (database: ${api.runtime.database.kind})`],
          ['Widget', `${api.url}/widget/gatehouse.js`],
          ['OpenAPI', `${api.url}/openapi.json`],
          ['Metrics', `${api.url}/metrics`],
          ['Admin token', adminToken],
        ],
        close: () => api.close(),
      };
    },
  },
  {
    name: 'demo',
    async start(shared) {
      const api = shared.api!;
      const creds = await ensureDemoApp(api.runtime.apps, config.dataDir);
      const demo = await startDemoServer({
        host: demoConfig.host,
        port: demoConfig.port,
        apiUrl: api.url,
        publicApiUrl: demoConfig.publicApiUrl,
        appKey: creds.appKey,
        appSecret: creds.appSecret,
        logger: api.runtime.logger.child({ role: 'demo' }),
      });
      return {
        lines: [
          ['Demo login', `${demo.url}/login   (user ${DEMO_USER.username}, password ${DEMO_USER.password})`],
          ['Demo app', `${creds.appKey}   (key and secret in ${resolve(config.dataDir, DEMO_APP_FILE)})`],
        ],
        close: () => demo.close(),
      };
    },
  },
];

const running: Running[] = [];
let stopping = false;

async function stopAll(signal: string, exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping...`);
  const force = setTimeout(() => {
    console.error('gatehouse: graceful shutdown took over 15 s; exiting.');
    process.exit(1);
  }, 15_000);
  force.unref();
  for (const role of [...running].reverse()) {
    await role.close().catch((error) => console.error(`gatehouse: stopping failed: ${error}`));
  }
  process.exit(exitCode);
}
process.on('SIGINT', () => void stopAll('SIGINT'));
process.on('SIGTERM', () => void stopAll('SIGTERM'));

const shared: Shared = {};
for (const role of ROLES) {
  try {
    running.push(await role.start(shared));
  } catch (error) {
    console.error(`gatehouse: the ${role.name} role could not start: ${(error as Error).message}`);
    await stopAll('start-up failure', 1);
  }
}

const lines = running.flatMap((r) => r.lines);
const width = Math.max(...lines.map(([label]) => label.length));
console.log(
  `\nGatehouse is running:\n${lines.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n')}\n\nCtrl-C stops everything.\n`,
);

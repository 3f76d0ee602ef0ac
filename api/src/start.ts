import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startStandby } from '@gatehouse/standby';
import { loadStandbyConfig } from '@gatehouse/standby/config';
import { loadConfig } from './config.ts';
import { loadDemoConfig } from './demo/config.ts';
import { DEMO_APP_FILE, ensureDemoApp } from './demo/demo-app.ts';
import { DEMO_USER } from './demo/login.ts';
import { startDemoServer } from './demo/server.ts';
import { ensureWidget } from './routes/widget.ts';
import { type ApiServer, startApiServer, urlHost } from './server.ts';

/**
 * `npm start`: everything a developer needs on one machine, started in order as a list of roles (the main
 * API, the demo site, then both standby roles), each printing its URLs. One Ctrl-C (or SIGTERM) stops them
 * all gracefully, in reverse order.
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

/**
 * `.env` in the folder `npm start` runs in (the checkout's root): any of the variables of `.env.example`.
 * A variable set in the shell wins over the file, as with `node --env-file`.
 */
const ENV_FILE = resolve('.env');
const envFileRead = existsSync(ENV_FILE);
if (envFileRead) process.loadEnvFile(ENV_FILE);

const config = loadConfig();
const demoConfig = loadDemoConfig();

/**
 * Where the standby roles listen: STANDBY_HOST (default HOST), STANDBY_BYPASS_PORT / STANDBY_FALLBACK_PORT
 * (default 8081 and 8082; with PORT=0, as tests run it, 0 too, so parallel runs never collide).
 */
const standbyListen = (() => {
  const env = process.env;
  const ephemeral = config.port === 0;
  return {
    host: env.STANDBY_HOST || config.host,
    bypassPort: env.STANDBY_BYPASS_PORT || (ephemeral ? '0' : '8081'),
    fallbackPort: env.STANDBY_FALLBACK_PORT || (ephemeral ? '0' : '8082'),
  };
})();
/** A standby URL as published and printed: a wildcard listen address as loopback, as for the API. */
const standbyUrl = (port: string | number) => `http://${urlHost(standbyListen.host)}:${port}`;
// Published by GET /v1/standby from the first request on, unless STANDBY_*_URLS name other hosts. Ports
// picked at random (0) are only known once the standby listens: filled in then. Published once the API
// runs: its start-up check for a shared outage store is about standbys in other processes, and these
// share its memory.
const publishBypass = config.standby.bypassUrls.length === 0;
const publishFallback = config.standby.fallbackUrls.length === 0;
function publishKnownStandbyPorts(): void {
  if (publishBypass && standbyListen.bypassPort !== '0') {
    config.standby.bypassUrls = [standbyUrl(standbyListen.bypassPort)];
  }
  if (publishFallback && standbyListen.fallbackPort !== '0') {
    config.standby.fallbackUrls = [standbyUrl(standbyListen.fallbackPort)];
  }
}

/** The environment without its empty variables: `NAME=` in .env (as in .env.example) means unset. */
const setVariables = () =>
  Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== ''));

const ROLES: Role[] = [
  {
    name: 'api',
    async start(shared) {
      const api = await startApiServer(config);
      shared.api = api;
      publishKnownStandbyPorts();
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
          ['Console', `${api.url}/console   (sign in with the admin token)`],
          ['API reference', `${api.url}/docs`],
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
        standbyUrls: config.standby.bypassUrls,
        backupUrls: config.standby.fallbackUrls,
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
  {
    // Both standby roles (docs/failover.md) beside the API, sharing its store of used offline_ tokens
    // in memory (or its STANDBY_STORE_URL Redis). Started after the demo site so their first snapshot
    // already holds the demo app.
    name: 'standby',
    async start(shared) {
      const api = shared.api!;
      const standby = await startStandby(
        loadStandbyConfig({
          ...setVariables(),
          MAIN_API_URL: api.url,
          STANDBY_HOST: standbyListen.host,
          STANDBY_BYPASS_PORT: standbyListen.bypassPort,
          STANDBY_FALLBACK_PORT: standbyListen.fallbackPort,
          STANDBY_DATA_DIR: process.env.STANDBY_DATA_DIR || join(config.dataDir, 'standby'),
          // The store is the API's own, passed below: no second connection.
          STANDBY_STORE_URL: '',
          // The API's sync credential (STANDBY_SYNC_TOKEN or the one it generated), never the admin token.
          STANDBY_SYNC_TOKEN: api.runtime.syncToken,
        }),
        {
          store: api.runtime.offlineStore,
          trust: api.runtime.offlineTrust,
          logger: api.runtime.logger.child({ service: 'standby' }),
        },
      );
      const bypass = standbyUrl(new URL(standby.urls.bypass!).port);
      const fallback = standbyUrl(new URL(standby.urls.fallback!).port);
      if (publishBypass) config.standby.bypassUrls = [bypass];
      if (publishFallback) config.standby.fallbackUrls = [fallback];
      return {
        lines: [
          ['Standby bypass', `${bypass}   (end-user side: offline verification; its state at /status)`],
          ['Standby fallback', `${fallback}   (server side: POST /api/validate; its state at /status)`],
        ],
        close: () => standby.close(),
      };
    },
  },
];

/** The variable that sets each port `npm start` listens on, to name in a start-up failure. */
function portVariable(port: number): string | undefined {
  const env = process.env;
  const ports: [string, number | string | undefined][] = [
    ['PORT', config.port],
    ['INTERNAL_PORT', config.internal.port],
    ['DEMO_PORT', demoConfig.port],
    ['STANDBY_BYPASS_PORT', standbyListen.bypassPort],
    ['STANDBY_FALLBACK_PORT', standbyListen.fallbackPort],
    ['STANDBY_INTERNAL_PORT', env.STANDBY_INTERNAL_PORT],
  ];
  return ports.find(([, value]) => value !== undefined && value !== '' && Number(value) === port)?.[0];
}

/** Why a role did not start, as one sentence; a busy or forbidden port names the variable that moves it. */
function startFailure(error: unknown): string {
  const e = error as NodeJS.ErrnoException & { port?: number; address?: string };
  if ((e.code === 'EADDRINUSE' || e.code === 'EACCES') && typeof e.port === 'number') {
    const variable = portVariable(e.port);
    const where = `port ${e.port} on ${e.address ?? 'this machine'}`;
    const why =
      e.code === 'EADDRINUSE'
        ? `${where} is already in use (another program, or another Gatehouse)`
        : `${where} needs privileges this process lacks`;
    if (!variable) return `${why}.`;
    return `${why}: set ${variable} to another port, in the shell (${variable}=${e.port + 10} npm start) or in .env.`;
  }
  return (error as Error).message;
}

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
    console.error(`gatehouse: the ${role.name} role could not start: ${startFailure(error)}`);
    await stopAll('start-up failure', 1);
  }
}

const lines = running.flatMap((r) => r.lines);
lines.push([
  'Settings',
  envFileRead
    ? `${ENV_FILE} and the environment (the environment wins)`
    : 'the environment; none from .env (no file; see .env.example)',
]);
const width = Math.max(...lines.map(([label]) => label.length));
console.log(
  `\nGatehouse is running:\n${lines.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join('\n')}\n\nCtrl-C stops everything.\n`,
);

import { startDemoServer } from './server.ts';

/**
 * The demo site alone, as its own process (the continuity drill runs it beside the API and the standby,
 * as deployed): DEMO_API_URL (the main API, for the browser and this backend), DEMO_APP_KEY and
 * DEMO_APP_SECRET, and optionally DEMO_HOST, DEMO_PORT (default 3000), DEMO_STANDBY_URLS (bypass hosts the
 * page's embed falls back to) and DEMO_BACKUP_URLS (fallback hosts for offline_ tokens), comma-separated.
 * `npm start` runs it beside the API instead (api/src/start.ts).
 */
const env = process.env;
const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
for (const key of ['DEMO_API_URL', 'DEMO_APP_KEY', 'DEMO_APP_SECRET']) {
  if (!env[key]) {
    console.error(`demo: ${key} is required.`);
    process.exit(1);
  }
}
const demo = await startDemoServer({
  host: env.DEMO_HOST || '127.0.0.1',
  port: Number(env.DEMO_PORT ?? 3000),
  apiUrl: env.DEMO_API_URL as string,
  appKey: env.DEMO_APP_KEY as string,
  appSecret: env.DEMO_APP_SECRET as string,
  standbyUrls: list(env.DEMO_STANDBY_URLS),
  backupUrls: list(env.DEMO_BACKUP_URLS),
});
console.log(`demo listening on ${demo.url}`);
const stop = () => void demo.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

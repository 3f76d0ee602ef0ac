import { loadStandbyConfig } from './config.ts';
import { startStandby } from './standby.ts';

/** Entry point of a standby process: `node standby/src/server.ts` (STANDBY_ROLE=bypass|fallback|both). */
const config = loadStandbyConfig();
const standby = await startStandby(config);
for (const [role, url] of Object.entries(standby.urls)) console.log(`Gatehouse standby (${role}): ${url}`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await standby.close();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());

import { solveChallenge } from '@gatehouse/node/headless';
import { ACTION, startBackend, submitForm } from './backend.ts';

/**
 * The drill by hand (docs/failover.md): verifies once every INTERVAL_MS (default 600) as an end user and
 * the protected backend would, printing which route each token took, until Ctrl-C, then a summary.
 *
 *   GATEHOUSE_URL=http://127.0.0.1:8080 GATEHOUSE_APP_KEY=ak_... GATEHOUSE_APP_SECRET=sk_... \
 *     npx node api/test/failover/verify-loop.ts
 */

const mainUrl = process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:8080';
const appKey = process.env.GATEHOUSE_APP_KEY ?? '';
const appSecret = process.env.GATEHOUSE_APP_SECRET ?? '';
// 600 ms: about 100 a minute, under the default per-IP limit of challenge initializations (120 a minute).
const interval = Number(process.env.INTERVAL_MS ?? 600);
if (!appKey || !appSecret) {
  console.error('verify-loop: set GATEHOUSE_APP_KEY and GATEHOUSE_APP_SECRET (a test-mode app).');
  process.exit(2);
}

const backend = await startBackend({ mainUrl, appKey, appSecret });
const counts = new Map<string, number>();
let running = true;
process.on('SIGINT', () => {
  running = false;
});

while (running) {
  const started = Date.now();
  let line: string;
  try {
    const solved = await solveChallenge({ baseUrl: mainUrl, appKey, action: ACTION, timeoutMs: 5000 });
    const answer = await submitForm(backend.url, solved.passToken, `by-hand-${started}`);
    const outcome = answer.accepted
      ? 'accepted'
      : `REFUSED ${answer.error ?? JSON.stringify(answer.verdict)}`;
    const key = `${solved.route} ${answer.accepted ? 'accepted' : 'refused'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    line = `${solved.passToken.slice(0, 12)}…  ${solved.route.padEnd(11)} ${outcome}`;
  } catch (error) {
    counts.set('error', (counts.get('error') ?? 0) + 1);
    line = `ERROR ${String(error)}`;
  }
  console.log(`${new Date().toISOString().slice(11, 23)}  ${line}  (${Date.now() - started} ms)`);
  await new Promise((r) => setTimeout(r, interval));
}
await backend.close();
console.log(`\n${[...counts].map(([k, n]) => `${k}: ${n}`).join('\n')}`);

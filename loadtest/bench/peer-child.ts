import { strict as assert } from 'node:assert';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import postgres from 'postgres';
import { serveCommands } from './child-ipc.ts';
import { createAltcha } from './peers/altcha.ts';
import { createCap, solveCap } from './peers/cap.ts';
import { pool } from './pool.ts';
import type { Command, Outcomes, Ready } from './protocol.ts';

/**
 * Bench child: the peers, Cap and ALTCHA, each doing its equivalent of our flows in a Koa app on the same
 * stack as our API (Koa, @koa/router, @koa/bodyparser, postgres.js with a pool of 10 on DATABASE_URL):
 *   POST /cap/challenge     Cap's challenge creation at its defaults (c=50, s=32, d=4), stored
 *   POST /cap/redeem        Cap's redeemChallenge: claim the challenge, 50 SHA-256 checks, store a token
 *   POST /cap/validate      Cap's validateToken, single use
 *   POST /altcha/challenge  ALTCHA's createChallenge as its README configures it
 *   POST /altcha/verify     the integrator's check of an ALTCHA payload: verifySolution, then single use
 * A rejected validation answers 200 with a false flag (the libraries answer a flag; which status the
 * integrator's route makes of it is its own choice), and the child counts accepted and rejected answers so
 * that the bench can tell a replay row from a broken fresh one; a failed redemption answers 400, as our
 * submit answers a wrong solution. The bench's commands prepare solved challenges, tokens and payloads with
 * the peers' own code before a case starts.
 */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('peer-child needs DATABASE_URL');
const sql = postgres(url, { max: 10, onnotice: () => {} });
const cap = await createCap(sql);
const altcha = await createAltcha(sql);

/**
 * Prepared Cap challenges keep the default count and size (50 sub-challenges of 32 hex characters) but
 * difficulty 1 instead of 4: solving 50 × 16^4 hashes each would take seconds per challenge, and the server's
 * work on redemption (50 SHA-256 and a comparison of the target prefix) does not depend on the difficulty.
 */
const PREPARED_CAP = { challengeDifficulty: 1 } as const;

let outcomes: Outcomes = { accepted: 0, rejected: 0 };
function count(ok: boolean): boolean {
  if (ok) outcomes.accepted++;
  else outcomes.rejected++;
  return ok;
}

async function capSolved(conf: { challengeCount?: number; challengeDifficulty: number }) {
  const made = await cap.createChallenge(conf);
  return { token: made.token!, solutions: solveCap(made.token!, made.challenge) };
}

async function capToken(): Promise<string> {
  // Tokens do not remember their challenge: a one-sub-challenge one redeems them cheapest.
  const redeemed = await cap.redeemChallenge(await capSolved({ challengeCount: 1, challengeDifficulty: 1 }));
  if (!redeemed.success || !redeemed.token) throw new Error(`cap: redemption failed: ${redeemed.message}`);
  return redeemed.token;
}

/** Start-up checks that what the bench prepares is what the peers accept, once, and nothing else. */
async function selfCheck(): Promise<void> {
  const good = await capSolved(PREPARED_CAP);
  const wrong = await capSolved(PREPARED_CAP);
  wrong.solutions = wrong.solutions.map((n) => n + 1_000_000);
  assert.equal((await cap.redeemChallenge(wrong)).success, false, 'cap: a wrong solution was accepted');
  const redeemed = await cap.redeemChallenge(good);
  assert.equal(redeemed.success, true, `cap: a prepared solution was refused: ${redeemed.message}`);
  assert.equal((await cap.redeemChallenge(good)).success, false, 'cap: a challenge redeemed twice');
  assert.equal((await cap.validateToken(redeemed.token!)).success, true, 'cap: a fresh token was refused');
  assert.equal((await cap.validateToken(redeemed.token!)).success, false, 'cap: a token validated twice');

  const payload = await altcha.solved();
  const decoded = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  assert.ok(decoded.challenge.parameters.keySignature, 'altcha: no key signature (the cheap verification)');
  decoded.solution.derivedKey = decoded.solution.derivedKey.replace(/^./, (c: string) =>
    c === '0' ? '1' : '0',
  );
  const tampered = Buffer.from(JSON.stringify(decoded)).toString('base64');
  assert.equal(await altcha.verify(tampered), false, 'altcha: a wrong key was accepted');
  assert.equal(await altcha.verify(payload), true, 'altcha: a prepared payload was refused');
  assert.equal(await altcha.verify(payload), false, 'altcha: a payload was accepted twice');
}
await selfCheck();

const router = new Router();
router.post('/cap/challenge', async function capChallenge(ctx) {
  ctx.body = await cap.createChallenge();
});
router.post('/cap/redeem', async function capRedeem(ctx) {
  const body = ctx.request.body as { token?: string; solutions?: number[] };
  const result = await cap.redeemChallenge({ token: body.token ?? '', solutions: body.solutions ?? [] });
  if (!count(result.success)) ctx.status = 400;
  ctx.body = result;
});
router.post('/cap/validate', async function capValidate(ctx) {
  const { token } = ctx.request.body as { token?: string };
  ctx.body = { success: count((await cap.validateToken(token ?? '')).success) };
});
router.post('/altcha/challenge', async function altchaChallenge(ctx) {
  ctx.body = (await altcha.challenge()).challenge;
});
router.post('/altcha/verify', async function altchaVerify(ctx) {
  const { altcha: payload } = ctx.request.body as { altcha?: string };
  ctx.body = { verified: count(await altcha.verify(payload)) };
});

const app = new Koa();
app.use(bodyParser({ enableTypes: ['json'], jsonStrict: true }));
app.use(router.routes());
app.silent = true;
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');

async function extra(command: Command): Promise<unknown> {
  switch (command.type) {
    case 'cap-solved':
      return pool(command.count, 16, async () => JSON.stringify(await capSolved(PREPARED_CAP)));
    case 'cap-tokens':
      return pool(command.count, 16, async () => {
        const token = await capToken();
        if (command.consume && !(await cap.validateToken(token)).success)
          throw new Error('cap: token refused');
        return token;
      });
    case 'altcha-payloads':
      return pool(command.count, 16, async () => {
        const payload = await altcha.solved();
        if (command.consume && !(await altcha.verify(payload))) throw new Error('altcha: payload refused');
        return payload;
      });
    case 'outcomes': {
      const answer = outcomes;
      outcomes = { accepted: 0, rejected: 0 };
      return answer;
    }
    default:
      throw new Error(`unknown command ${command.type}`);
  }
}

serveCommands(extra, async () => {
  server.closeAllConnections();
  server.close();
  await sql.end({ timeout: 1 });
});
process.send?.({
  type: 'ready',
  port: (server.address() as AddressInfo).port,
  database: 'postgres',
} satisfies Ready);

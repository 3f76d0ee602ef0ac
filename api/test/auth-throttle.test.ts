import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  databaseAvailable,
  type Json,
  REDIS_URL,
  redisAvailable,
  startTestApi,
  TEST_DATABASE,
  type TestApi,
} from './harness.ts';

/*
 * Failed authentication is throttled per source address and per credential: an address that sends wrong
 * admin tokens, wrong app secrets or forged tokens in a row is refused with 429 `rate_limited` and
 * Retry-After, while the
 * right credentials from an address that has not failed keep working, and a genuine token is judged
 * whoever sends it. Sources are told apart by X-Forwarded-For behind TRUSTED_PROXIES=loopback, as behind an ingress.
 */
const run = await databaseAvailable();
const runShared = run && (await redisAvailable('the shared authentication-throttle test'));

const ATTACKER = '203.0.113.66';
const OTHER_ATTACKER = '203.0.113.67';
const VENDOR_ATTACKER = '203.0.113.68';
const HOLDER = '198.51.100.20';
const from = (ip: string) => ({ 'X-Forwarded-For': ip });
/** The defaults (docs/security.md), stated so the test does not depend on the harness's. */
const LIMITS = {
  TRUSTED_PROXIES: 'loopback',
  AUTH_FAILURE_WINDOW_SECONDS: '60',
  AUTH_FAILURES_PER_SOURCE_AND_KEY: '10',
  AUTH_FAILURES_PER_SOURCE: '30',
  AUTH_FAILURES_PER_KEY: '100',
  AUTH_TOKEN_FAILURES_PER_SOURCE_AND_APP: '60',
};

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

function expectThrottled(res: Answer): void {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: -1, error: 'rate_limited' });
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

async function adminList(api: TestApi, token: string, ip: string): Promise<Answer> {
  const res = await fetch(`${api.url}/admin/v1/apps`, {
    headers: { Authorization: `Bearer ${token}`, ...from(ip) },
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

/** A real pass token for the app, solved headless (test mode: trivial proof-of-work). */
async function passToken(api: TestApi, appKey: string): Promise<string> {
  const started = await api.post('/v1/challenge/init', { app_key: appKey, action: 'login' });
  const pow = await solvePuzzle(started.body.data.pow as Puzzle);
  const solved = await api.post('/v1/challenge/submit', {
    app_key: appKey,
    challenge_id: started.body.data.challenge_id,
    challenge: started.body.data.challenge,
    pow,
  });
  return solved.body.data.pass_token as string;
}

describe.runIf(run)(`throttling failed authentication (${TEST_DATABASE})`, () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(LIMITS);
  });
  afterAll(() => api?.close());

  it('600 wrong admin tokens from one address: 429s; the right token from another address keeps working', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 600; i++) {
      const res = await adminList(api, `at_wrong-${i}-aaaaaaaaaaaaaaaaaaaaaaaa`, ATTACKER);
      statuses.push(res.status);
      if (res.status === 429) expectThrottled(res);
      if (i % 100 === 0) expect((await adminList(api, api.runtime.adminToken, HOLDER)).status).toBe(200);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    // The address that failed is refused even with the right token until its window ends.
    expectThrottled(await adminList(api, api.runtime.adminToken, ATTACKER));
    expect((await adminList(api, api.runtime.adminToken, HOLDER)).status).toBe(200);
  });

  it('600 wrong app secrets from one address: 429s; the right secret from another address keeps working', async () => {
    const { appKey, appSecret } = await api.createApp({ name: 'throttled' });
    const issue = (secret: string, ip: string) =>
      api.post(
        '/v1/server/challenge/issue',
        { action: 'login' },
        { 'X-App-Key': appKey, 'X-App-Secret': secret, ...from(ip) },
      );
    const statuses: number[] = [];
    for (let i = 0; i < 600; i++) {
      const res = await issue(`sk_wrong_${i}`, ATTACKER);
      statuses.push(res.status);
      if (res.status === 429) expectThrottled(res);
      if (i % 100 === 0) expect((await issue(appSecret, HOLDER)).status).toBe(200);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    // Unknown app keys count for the address too: a second address spraying keys is refused as well.
    const sprayed: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await api.post(
        '/v1/validate',
        { pass_token: 'pt_x' },
        { 'X-App-Key': `ak_unknown${i}`, 'X-App-Secret': 'sk_x', ...from(OTHER_ATTACKER) },
      );
      sprayed.push(res.status);
    }
    expect(sprayed.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(sprayed.slice(30).every((s) => s === 429)).toBe(true);
    expect((await issue(appSecret, HOLDER)).status).toBe(200);
  });

  it('wrong secrets at a siteverify endpoint from one address: 429s; the right secret from another address verifies', async () => {
    const { appKey, appSecret } = await api.createApp({ name: 'vendor', test_mode: true });
    const siteverify = (secret: string, response: string, ip: string) =>
      api.post('/turnstile/v0/siteverify', { secret, response }, from(ip));
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await siteverify(`sk_wrong_${i}`, 'pt_whatever', VENDOR_ATTACKER);
      statuses.push(res.status);
      if (res.status === 200) expect(res.body['error-codes']).toContain('invalid-input-secret');
      else expectThrottled(res);
    }
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const verified = await siteverify(appSecret, await passToken(api, appKey), HOLDER);
    expect(verified.status).toBe(200);
    expect(verified.body.success).toBe(true);
  });

  it('600 forged tokens at validate from one address: 429s, while genuine tokens are judged from any address', async () => {
    const { appKey, appSecret } = await api.createApp({ name: 'forged', test_mode: true });
    const auth = (ip: string) => ({ 'X-App-Key': appKey, 'X-App-Secret': appSecret, ...from(ip) });
    const genuine = await passToken(api, appKey);
    const statuses: number[] = [];
    for (let i = 0; i < 600; i++) {
      const forged = `${genuine.slice(0, -6)}${String(i).padStart(6, 'A')}`;
      const res = await api.post('/v1/validate', { pass_token: forged }, auth(ATTACKER));
      statuses.push(res.status);
      if (res.status === 429) expectThrottled(res);
    }
    expect(statuses.slice(60).every((s) => s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(540);
    // A genuine token is judged even from the throttled address: an integrator's real users are never refused.
    const verdict = await api.post('/v1/validate', { pass_token: genuine }, auth(ATTACKER));
    expect(verdict.status).toBe(200);
    expect(verdict.body.data.valid).toBe(true);
    const another = await passToken(api, appKey);
    const elsewhere = await api.post('/v1/validate', { pass_token: another }, auth(HOLDER));
    expect(elsewhere.body.data.valid).toBe(true);
  });
});

describe.runIf(runShared)(`throttling is shared across instances through Redis (${TEST_DATABASE})`, () => {
  let one: TestApi;
  let two: TestApi;
  beforeAll(async () => {
    one = await startTestApi({ ...LIMITS, REDIS_URL });
    two = await startTestApi({ ...LIMITS, REDIS_URL });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('failures on one instance count on the other', async () => {
    const octet = () => Math.floor(Math.random() * 256);
    const ip = `10.${octet()}.${octet()}.${octet()}`;
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const api = i % 2 === 0 ? one : two;
      statuses.push((await adminList(api, `at_wrong-shared-${i}-aaaaaaaaaaaaaaaaaa`, ip)).status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
  });
});

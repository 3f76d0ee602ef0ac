import { Writable } from 'node:stream';
import type { Database } from '@gatehouse/core/db';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, mintLoginToken, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * Spec, Authentication: both server-to-server endpoints need X-App-Key and X-App-Secret; a wrong key is
 * invalid_app_key, a wrong secret invalid_app_secret (401, DESIGN.md). Invariant 5: the secret is never
 * logged, which is checked on everything a real pino logger writes at the most verbose level.
 */

const run = await databaseAvailable();

type Creds = { appKey: string; appSecret: string; appId: string };

const ENDPOINTS = [
  // With good credentials: an unknown token is the token_not_found verdict (HTTP 200), an issuance succeeds.
  { path: '/v1/validate', body: { pass_token: 'pt_x.y' }, authenticated: 200 },
  { path: '/v1/server/challenge/issue', body: { action: 'login' }, authenticated: 200 },
] as const;

describe.runIf(run)('authentication of /v1/validate and /v1/server/challenge/issue', () => {
  let api: TestApi;
  let app: Creds;
  let other: Creds;
  const lines: string[] = [];

  beforeAll(async () => {
    const capture = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    api = await startTestApi({}, pino({ level: 'trace' }, capture));
    app = await api.createApp({ name: 'auth', plan: 'enterprise' });
    other = await api.createApp({ name: 'other', plan: 'enterprise' });
  });
  afterAll(() => api?.close());

  async function call(path: string, body: Json, headers: Record<string, string>) {
    const res = await api.post(path, body, headers);
    expectMatchesOpenApi(path, 'post', res);
    return res;
  }
  function expectError(res: { status: number; body: Json }, error: string) {
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: -1, error });
  }

  for (const { path, body, authenticated } of ENDPOINTS) {
    describe(path, () => {
      it('answers 401 invalid_app_key without X-App-Key, or with an unknown one', async () => {
        expectError(await call(path, body, {}), 'invalid_app_key');
        expectError(await call(path, body, { 'X-App-Secret': app.appSecret }), 'invalid_app_key');
        for (const key of [
          'ak_unknown',
          'nonsense',
          app.appSecret,
          `${app.appKey}x`,
          app.appKey.slice(0, -1),
          'k'.repeat(5000),
        ]) {
          expectError(
            await call(path, body, { 'X-App-Key': key, 'X-App-Secret': app.appSecret }),
            'invalid_app_key',
          );
        }
      });

      it('answers 401 invalid_app_secret for the right key with a missing or wrong secret', async () => {
        expectError(await call(path, body, { 'X-App-Key': app.appKey }), 'invalid_app_secret');
        for (const secret of [
          'wrong',
          other.appSecret,
          app.appSecret.slice(0, -1),
          `${app.appSecret}x`,
          app.appSecret.toUpperCase(),
          app.appKey,
          's'.repeat(5000),
        ]) {
          expectError(
            await call(path, body, { 'X-App-Key': app.appKey, 'X-App-Secret': secret }),
            'invalid_app_secret',
          );
        }
      });

      it("refuses another app's secret for this key, and this app's secret for another key", async () => {
        expectError(
          await call(path, body, { 'X-App-Key': app.appKey, 'X-App-Secret': other.appSecret }),
          'invalid_app_secret',
        );
        expectError(
          await call(path, body, { 'X-App-Key': other.appKey, 'X-App-Secret': app.appSecret }),
          'invalid_app_secret',
        );
      });

      it('authenticates before reading the body: no credentials and a bad body is still 401', async () => {
        expectError(await call(path, { nonsense: true }, {}), 'invalid_app_key');
        expectError(await call(path, 'x=1', { 'content-type': 'text/plain' }), 'invalid_app_key');
      });

      it('gets past authentication with the right key and secret, header names in any case', async () => {
        const res = await call(path, body, { 'x-app-key': app.appKey, 'X-APP-SECRET': app.appSecret });
        expect(res.status).toBe(authenticated);
      });
    });
  }

  it('never writes a secret to the logs, on success, failure or an internal error (invariant 5)', async () => {
    // A successful validation and issuance.
    const token = await mintLoginToken(api, app.appId, 'ch_log');
    const headers = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    expect((await call('/v1/validate', { pass_token: token }, headers)).body.data.valid).toBe(true);
    expect((await call('/v1/server/challenge/issue', { action: 'login' }, headers)).status).toBe(200);

    // Failures: a wrong secret that looks real, a secret sent as the key, a bad body.
    const wrongSecret = `${app.appSecret.slice(0, -4)}WXYZ`;
    await call(
      '/v1/validate',
      { pass_token: token },
      { 'X-App-Key': app.appKey, 'X-App-Secret': wrongSecret },
    );
    await call(
      '/v1/validate',
      { pass_token: token },
      { 'X-App-Key': app.appSecret, 'X-App-Secret': app.appSecret },
    );
    await call('/v1/validate', '{bad json', headers);

    // An internal error (the database fails mid-request): the one path that logs an error object.
    const db = api.runtime.db;
    api.runtime.db = new Proxy(db, {
      get() {
        throw new Error('database down (test)');
      },
    }) as Database;
    try {
      const failed = await api.post('/v1/validate', { pass_token: token }, headers);
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ code: -1, error: 'internal_error' });
      expect(JSON.stringify(failed.body)).not.toContain('database down');
    } finally {
      api.runtime.db = db;
    }

    // An app created through the admin API: its secret is in that answer, and must not be in the logs.
    const created = await fetch(`${api.url}/admin/v1/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.runtime.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'created-over-http' }),
    });
    expect(created.status).toBe(201);
    const createdSecret = ((await created.json()) as Json).data.app_secret as string;
    expect(createdSecret).toMatch(/^sk_/);

    const log = lines.join('\n');
    // The capture works: one line per request, and the internal error was logged with its cause.
    expect(lines.filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(7);
    expect(log).toContain('database down (test)');
    expect(log).toContain('"path":"/v1/validate"');
    for (const secret of [
      app.appSecret,
      wrongSecret,
      other.appSecret,
      createdSecret,
      api.runtime.adminToken,
    ]) {
      expect(log).not.toContain(secret);
      // Not even the random part without its prefix.
      expect(log).not.toContain(secret.slice(3));
    }
  });
});

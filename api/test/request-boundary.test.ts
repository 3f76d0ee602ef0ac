import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * The boundary every endpoint shares:
 * - a body declared in a charset other than UTF-8 answers 415 (never read as UTF-8 regardless);
 * - a NUL byte in any string of a body, key or value, at any depth, answers 400 (PostgreSQL refuses the
 *   byte, so it would otherwise surface as a 500 wherever the string reached the database).
 * Both through a real socket, on PGlite and on PostgreSQL.
 */

const run = await databaseAvailable();

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

describe.runIf(run)('request boundary: charset and NUL bytes', () => {
  let api: TestApi;
  let appAuth: Record<string, string>;
  let adminAuth: Record<string, string>;
  let appKey: string;
  let patchKey: string;

  beforeAll(async () => {
    api = await startTestApi();
    const app = await api.createApp({ name: 'boundary', plan: 'enterprise' });
    appKey = app.appKey;
    appAuth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    adminAuth = { authorization: `Bearer ${api.runtime.adminToken}` };
    patchKey = (await api.createApp({ name: 'patched' })).appKey;
  });
  afterAll(() => api?.close());

  async function send(method: string, path: string, type: string, body: string | Buffer) {
    const res = await fetch(api.url + path, {
      method,
      headers: { ...appAuth, ...adminAuth, 'content-type': type },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    const text = await res.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers } satisfies Answer;
  }

  /** Every endpoint that reads a body, with a body it would take. */
  const endpoints = (): [string, string, Record<string, unknown>][] => [
    ['POST', '/v1/challenge/init', { app_key: appKey, action: 'login' }],
    ['POST', '/v1/challenge/submit', { app_key: appKey, challenge_id: 'ch_x', challenge: 'sealed' }],
    ['POST', '/v1/validate', { pass_token: 'pt_x.y' }],
    ['POST', '/v1/server/challenge/issue', { action: 'login' }],
    ['POST', '/admin/v1/apps', { name: 'charset' }],
    ['PATCH', `/admin/v1/apps/${patchKey}`, { name: 'charset' }],
    ['POST', `/admin/v1/apps/${patchKey}/rotate-secret`, { grace_seconds: 0 }],
  ];

  describe('only UTF-8 bodies', () => {
    it('answers 415 with the envelope for any other declared charset, on every endpoint', async () => {
      const charsets = [
        'utf-16',
        'UTF-16',
        'utf-16le',
        '"utf-16"',
        'iso-8859-1',
        'latin1',
        'us-ascii',
        'bogus',
      ];
      for (const [method, path, body] of endpoints()) {
        for (const charset of charsets) {
          const res = await send(method, path, `application/json; charset=${charset}`, JSON.stringify(body));
          expect(res.status, `${method} ${path} charset=${charset}`).toBe(415);
          expect(res.body).toMatchObject({ code: -1, error: 'unsupported_media_type' });
          expect(res.body.message).toMatch(/UTF-8/);
          expectMatchesOpenApi(path, method, res);
        }
      }
    });

    it('refuses a body really encoded in UTF-16 with 415, not a parse error', async () => {
      const utf16 = Buffer.from(JSON.stringify({ pass_token: 'pt_x.y' }), 'utf16le');
      const res = await send('POST', '/v1/validate', 'application/json; charset=utf-16le', utf16);
      expect(res.status).toBe(415);
      expect(res.body.error).toBe('unsupported_media_type');
    });

    it('refuses form bodies in another charset as well', async () => {
      const res = await send(
        'POST',
        '/v1/server/challenge/issue',
        'application/x-www-form-urlencoded; charset=iso-8859-1',
        'action=login',
      );
      expect(res.status).toBe(415);
      expectMatchesOpenApi('/v1/server/challenge/issue', 'post', res);
    });

    it('takes utf-8 in any case, quoted or not, and no charset at all', async () => {
      for (const type of [
        'application/json',
        'application/json; charset=utf-8',
        'application/json; charset=UTF-8',
        'application/json;charset="utf-8"',
        'Application/JSON; Charset=Utf-8',
      ]) {
        const res = await send('POST', '/v1/validate', type, JSON.stringify({ pass_token: 'pt_x.y' }));
        expect(res.body.error, type).toBe('token_not_found');
      }
    });
  });

  describe('no NUL byte in any string', () => {
    const NUL = '\u0000';
    /** [method, path, body, the field the answer must name]. */
    const cases = (): [string, string, unknown, string][] => [
      ['POST', '/v1/challenge/init', { app_key: `ak_a${NUL}b`, action: 'login' }, 'app_key'],
      ['POST', '/v1/challenge/init', { app_key: appKey, action: 'login', referer: `x${NUL}` }, 'referer'],
      [
        'POST',
        '/v1/challenge/init',
        { app_key: appKey, action: 'login', signals: { languages: ['en', `d${NUL}e`] } },
        'signals.languages.1',
      ],
      [
        'POST',
        '/v1/challenge/submit',
        { app_key: `ak_a${NUL}b`, challenge_id: 'ch_x', challenge: 'sealed' },
        'app_key',
      ],
      [
        'POST',
        '/v1/challenge/submit',
        { app_key: appKey, challenge_id: `ch_${NUL}`, challenge: 'sealed', answer: { x: NUL } },
        'challenge_id',
      ],
      [
        'POST',
        '/v1/challenge/submit',
        { app_key: appKey, challenge_id: 'ch_x', challenge: 'sealed', answer: { [`x${NUL}`]: 1 } },
        'answer',
      ],
      ['POST', '/v1/validate', { pass_token: `pt_a${NUL}.b` }, 'pass_token'],
      ['POST', '/v1/validate', { pass_token: 'pt_x.y', idempotency_key: `k${NUL}` }, 'idempotency_key'],
      ['POST', '/v1/server/challenge/issue', { action: 'login', bind_uid: `u${NUL}` }, 'bind_uid'],
      ['POST', '/v1/server/challenge/issue', { action: `log${NUL}in` }, 'action'],
      ['POST', '/admin/v1/apps', { name: `n${NUL}` }, 'name'],
      ['POST', '/admin/v1/apps', { name: 'n', risk_policy: { note: `a${NUL}b` } }, 'risk_policy.note'],
      ['POST', '/admin/v1/apps', { name: 'n', risk_policy: { [`k${NUL}`]: 1 } }, 'risk_policy'],
      ['POST', '/admin/v1/apps', { name: 'n', allowed_domains: [`a${NUL}.example`] }, 'allowed_domains.0'],
      [
        'PATCH',
        `/admin/v1/apps/${patchKey}`,
        { risk_policy: { deep: [{ x: NUL }] } },
        'risk_policy.deep.0.x',
      ],
      ['PATCH', `/admin/v1/apps/${patchKey}`, { allowed_domains: [NUL] }, 'allowed_domains.0'],
      ['POST', `/admin/v1/apps/${patchKey}/rotate-secret`, { [`grace${NUL}`]: 0 }, 'body'],
    ];

    it('answers 400 invalid_request naming the field, on every endpoint, keys and values at any depth', async () => {
      for (const [method, path, body, field] of cases()) {
        const res = await send(method, path, 'application/json', JSON.stringify(body));
        const what = `${method} ${path} ${JSON.stringify(body)}`;
        expect(res.status, what).toBe(400);
        expect(res.body, what).toMatchObject({ code: -1, error: 'invalid_request' });
        expect(res.body.message, what).toContain(field);
        expect(res.body.message, what).toMatch(/NUL/);
        expectMatchesOpenApi(path, method, res);
      }
    });

    it('answers 400 for NUL in form bodies', async () => {
      const res = await send(
        'POST',
        '/v1/server/challenge/issue',
        'application/x-www-form-urlencoded',
        'action=login&bind_device_id=a%00b',
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('bind_device_id');
    });

    it('stores nothing and leaves the app list readable', async () => {
      const before = await fetch(`${api.url}/admin/v1/apps`, { headers: adminAuth });
      const count = ((await before.json()) as Json).data.apps.length;
      for (const [method, path, body] of cases()) {
        await send(method, path, 'application/json', JSON.stringify(body));
      }
      const after = await fetch(`${api.url}/admin/v1/apps`, { headers: adminAuth });
      expect(after.status).toBe(200);
      expect(((await after.json()) as Json).data.apps.length).toBe(count);
      const patched = await fetch(`${api.url}/admin/v1/apps/${patchKey}`, { headers: adminAuth });
      expect(((await patched.json()) as Json).data).toMatchObject({ risk_policy: {}, allowed_domains: [] });
    });

    it('still takes the other control characters and unicode where a field allows them', async () => {
      const res = await send(
        'POST',
        '/admin/v1/apps',
        'application/json',
        JSON.stringify({ name: 'tab\tand 😀 line\nbreak \u2028 end' }),
      );
      expect(res.status).toBe(201);
      expect(res.body.data.name).toBe('tab\tand 😀 line\nbreak \u2028 end');
    });
  });
});

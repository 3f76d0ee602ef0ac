import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiDocument } from '../src/openapi.ts';
import { mintDegradedToken } from '../src/tokens/degraded-tokens.ts';
import { mintPassToken } from '../src/tokens/pass-tokens.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi, type OpenApiContract, useOpenApiDocument } from './openapi-assert.ts';

/*
 * The OpenAPI document served at /openapi.json is the contract: it compiles as JSON Schema 2020-12, and
 * real answers of the running API (success and error, both integration endpoints, readiness, admin) match
 * the response schema documented for their path, method and status.
 */

const run = await databaseAvailable();

type Creds = { appKey: string; appSecret: string; appId: string };

describe.runIf(run)('OpenAPI contract', () => {
  let api: TestApi;
  let contract: OpenApiContract;
  let served: Json;
  let app: Creds;
  let strict: Creds;

  beforeAll(async () => {
    api = await startTestApi();
    const res = await fetch(`${api.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    served = await res.json();
    contract = useOpenApiDocument(served);
    app = await api.createApp({ name: 'contract', plan: 'enterprise' });
    strict = await api.createApp({ name: 'strict', plan: 'enterprise', client_ip_policy: 'reject' });
  });
  afterAll(() => api?.close());

  const auth = (c: Creds) => ({ 'X-App-Key': c.appKey, 'X-App-Secret': c.appSecret });
  const admin = () => ({ authorization: `Bearer ${api.runtime.adminToken}` });

  async function get(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(api.url + path, { headers });
    const text = await res.text();
    let body: Json = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, headers: res.headers };
  }
  async function mint(creds: Creds, userIp = '203.0.113.7') {
    return mintPassToken(api.runtime.db, api.runtime.keys, {
      app: (await api.runtime.apps.findById(creds.appId))!,
      challengeId: 'ch_contract',
      action: 'login',
      captchaArgs: {
        platform: 'web',
        user_ip: userIp,
        referer: null,
        pkg: 'com.example.app',
        solved_at: Math.floor(Date.now() / 1000),
        risk_score: 100,
      },
    });
  }

  describe('the document', () => {
    it('is OpenAPI 3.1 and the very document the code builds', () => {
      expect(served.openapi).toMatch(/^3\.1\./);
      expect(served.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
      expect(served).toEqual(JSON.parse(JSON.stringify(openapiDocument)));
    });

    it('documents both integration endpoints with their security schemes', () => {
      for (const path of ['/v1/validate', '/v1/server/challenge/issue']) {
        const op = served.paths[path]?.post;
        expect(op, path).toBeDefined();
        expect(op.security).toEqual([{ appKey: [], appSecret: [] }]);
      }
      expect(served.components.securitySchemes.appKey).toEqual({
        type: 'apiKey',
        in: 'header',
        name: 'X-App-Key',
      });
      expect(served.components.securitySchemes.appSecret).toEqual({
        type: 'apiKey',
        in: 'header',
        name: 'X-App-Secret',
      });
    });

    it('compiles every request and response schema as JSON Schema 2020-12', () => {
      let compiled = 0;
      for (const [path, method, op] of contract.operations()) {
        const request = (op.requestBody as Json)?.content ?? {};
        const responses = Object.entries((op.responses ?? {}) as Record<string, Json>);
        expect(responses.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const [status, response] of responses) {
          expect(typeof response.description, `${method} ${path} ${status}`).toBe('string');
          expect(response.description.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
        }
        const media = [
          ...Object.values(request),
          ...responses.flatMap(([, r]) => Object.values(r.content ?? {})),
        ];
        for (const { schema } of media as { schema?: unknown }[]) {
          if (schema === undefined) continue;
          expect(() => contract.compile(schema), `${method} ${path}`).not.toThrow();
          compiled++;
        }
      }
      expect(compiled).toBeGreaterThan(20);
    });

    it('documents, for each error status, only codes that map to that status', () => {
      for (const [path, method, op] of contract.operations()) {
        for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          const schema = response.content?.['application/json']?.schema;
          if (Number(status) < 400 || !schema) continue;
          // The siteverify endpoints answer their failures in the vendor's shape (success false), not ours.
          const envelopes = ((schema.oneOf ?? [schema]) as Json[]).filter((s) => s.properties?.code);
          if (path.endsWith('/siteverify') && envelopes.length === 0) continue;
          expect(envelopes.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
          for (const envelope of envelopes) {
            const codes = envelope.properties.error.enum as string[];
            expect(codes.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
            for (const code of codes) {
              expect(served.components.schemas.ErrorEnvelope.properties.error.enum).toContain(code);
            }
          }
        }
      }
    });

    it('documents the server-token limits (ttl from 1, clamped to 900; max_uses 1 to 1000)', () => {
      const schema =
        served.paths['/v1/server/challenge/issue'].post.requestBody.content['application/json'].schema;
      expect(schema.required).toEqual(['action']);
      expect(schema.properties.ttl).toMatchObject({ type: 'integer', minimum: 1 });
      expect(schema.properties.ttl.description).toContain('clamped to 900');
      expect(schema.properties.max_uses).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    });
  });

  describe('the checker', () => {
    it('refuses answers the document does not allow', () => {
      expect(contract.problems('/v1/validate', 'post', { status: 418, body: {} })).not.toEqual([]);
      expect(contract.problems('/v1/validate', 'get', { status: 200, body: {} })).not.toEqual([]);
      expect(contract.problems('/nowhere', 'get', { status: 200, body: {} })).not.toEqual([]);
      expect(contract.problems('/v1/validate', 'post', { status: 200, body: { code: 0 } })).not.toEqual([]);
      expect(
        contract.problems('/v1/validate', 'post', {
          status: 404,
          body: {
            code: -1,
            error: 'token_expired',
            message: 'x',
            msg: 'x',
            data: { error: 'token_expired' },
          },
        }),
      ).not.toEqual([]);
      expect(
        contract.problems('/v1/validate', 'post', {
          status: 200,
          body: {
            code: 0,
            data: { valid: false, degraded: true, reason: 'quota_exhausted', expired: false, x: 1 },
          },
        }),
      ).not.toEqual([]);
      expect(
        contract.problems('/v1/validate', 'post', {
          status: 200,
          body: {
            code: -1,
            error: 'token_not_found',
            message: 'x',
            msg: 'x',
            data: { valid: false, error: 'token_not_found' },
          },
        }),
      ).toEqual([]);
      // A verdict without the code in data.error (where the origin's SDKs read it) is not allowed.
      expect(
        contract.problems('/v1/validate', 'post', {
          status: 200,
          body: { code: -1, error: 'token_not_found', message: 'x', msg: 'x' },
        }),
      ).not.toEqual([]);
    });

    it('maps concrete paths onto templates', () => {
      expect(contract.template('/admin/v1/apps/ak_abc')).toBe('/admin/v1/apps/{appKey}');
      expect(contract.template('/admin/v1/apps/ak_abc/disable')).toBe('/admin/v1/apps/{appKey}/disable');
      expect(contract.template('/admin/v1/apps')).toBe('/admin/v1/apps');
      expect(contract.template('/admin/v1/apps/a/b/c')).toBeUndefined();
    });
  });

  describe('real answers match the document', () => {
    it('POST /v1/validate: pass verdicts, client_ip reports and rejections, degraded verdicts', async () => {
      const plain = await api.post('/v1/validate', { pass_token: await mint(app) }, auth(app));
      expect(plain.status).toBe(200);
      expectMatchesOpenApi('/v1/validate', 'post', plain);

      for (const clientIp of ['203.0.113.9', '198.51.100.1', '2001:db8::1']) {
        const res = await api.post(
          '/v1/validate',
          { pass_token: await mint(app), client_ip: clientIp },
          auth(app),
        );
        expect(res.status).toBe(200);
        expect(res.body.data.client_ip_check).toBeDefined();
        expectMatchesOpenApi('/v1/validate', 'post', res);
      }
      const rejected = await api.post(
        '/v1/validate',
        { pass_token: await mint(strict), client_ip: '198.51.100.1' },
        auth(strict),
      );
      expect(rejected.body.data).toMatchObject({ valid: false, error: 'client_ip_mismatch' });
      expectMatchesOpenApi('/v1/validate', 'post', rejected);

      const dg = mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login');
      const degraded = await api.post('/v1/validate', { pass_token: dg }, auth(app));
      expect(degraded.body.data.degraded).toBe(true);
      expectMatchesOpenApi('/v1/validate', 'post', degraded);
      // An expired dg_ is the token_expired verdict.
      const old = mintDegradedToken(api.runtime.keys, { id: app.appId }, 'login', Date.now() - 10 * 60_000);
      const expiredDg = await api.post('/v1/validate', { pass_token: old }, auth(app));
      expect(expiredDg.body.data).toEqual({ valid: false, error: 'token_expired' });
      expectMatchesOpenApi('/v1/validate', 'post', expiredDg);
    });

    it('POST /v1/validate: every error status', async () => {
      const token = await mint(app);
      await api.post('/v1/validate', { pass_token: token }, auth(app));
      const expired = api.runtime.keys.sealPass({ id: 'gone', app: app.appId, exp: 1 });
      const cases: [number, Promise<{ status: number; body: Json; headers: Headers }>][] = [
        [200, api.post('/v1/validate', { pass_token: token }, auth(app))],
        [200, api.post('/v1/validate', { pass_token: expired }, auth(app))],
        [200, api.post('/v1/validate', { pass_token: 'pt_nope' }, auth(app))],
        [200, api.post('/v1/validate', { pass_token: token, action: 'pay' }, auth(app))],
        [400, api.post('/v1/validate', { pass_token: token, extra: 1 }, auth(app))],
        [400, api.post('/v1/validate', { pass_token: 7 }, auth(app))],
        [400, api.post('/v1/validate', '{oops', auth(app))],
        [401, api.post('/v1/validate', { pass_token: token }, {})],
        [401, api.post('/v1/validate', { pass_token: token }, { ...auth(app), 'X-App-Secret': 'nope' })],
        [415, api.post('/v1/validate', 'pass_token=x', { ...auth(app), 'content-type': 'text/plain' })],
        [413, api.post('/v1/validate', { pass_token: 'x'.repeat(api.config.bodyLimitBytes) }, auth(app))],
      ];
      for (const [status, pending] of cases) {
        const res = await pending;
        expect(res.status).toBe(status);
        expectMatchesOpenApi('/v1/validate', 'post', res);
      }
    });

    it('POST /v1/validate: 403 app_disabled', async () => {
      const disabled = await api.createApp({ name: 'disabled' });
      await api.runtime.apps.setDisabled(disabled.appKey, true);
      const res = await api.post('/v1/validate', { pass_token: 'pt_x' }, auth(disabled));
      expect(res.status).toBe(403);
      expectMatchesOpenApi('/v1/validate', 'post', res);
    });

    it('POST /v1/server/challenge/issue: success and every error status', async () => {
      const form = { ...auth(app), 'content-type': 'application/x-www-form-urlencoded' };
      const cases: [number, Promise<{ status: number; body: Json; headers: Headers }>][] = [
        [200, api.post('/v1/server/challenge/issue', 'action=login&ttl=900&bind_ip=203.0.113.7', form)],
        [200, api.post('/v1/server/challenge/issue', { action: 'login', max_uses: 1000 }, auth(app))],
        [400, api.post('/v1/server/challenge/issue', 'ttl=901', form)],
        [400, api.post('/v1/server/challenge/issue', { action: 'login', max_uses: 1001 }, auth(app))],
        [401, api.post('/v1/server/challenge/issue', { action: 'login' }, {})],
        [
          401,
          api.post('/v1/server/challenge/issue', { action: 'login' }, { ...auth(app), 'X-App-Secret': 'x' }),
        ],
        [
          415,
          api.post('/v1/server/challenge/issue', 'action=login', {
            ...auth(app),
            'content-type': 'text/plain',
          }),
        ],
        [
          413,
          api.post('/v1/server/challenge/issue', `action=${'a'.repeat(api.config.bodyLimitBytes)}`, form),
        ],
      ];
      for (const [status, pending] of cases) {
        const res = await pending;
        expect(res.status).toBe(status);
        expectMatchesOpenApi('/v1/server/challenge/issue', 'post', res);
      }
    });

    it('POST /v1/server/challenge/issue: 429 rate_limit_exceeded with Retry-After', async () => {
      const free = await api.createApp({ name: 'free' });
      // Far more than the free plan's burst, all at once: some must be refused.
      const answers = await Promise.all(
        Array.from({ length: 60 }, () =>
          api.post('/v1/server/challenge/issue', { action: 'login' }, auth(free)),
        ),
      );
      const limited = answers.filter((a) => a.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
      for (const res of [limited[0]!, answers.find((a) => a.status === 200)!]) {
        expectMatchesOpenApi('/v1/server/challenge/issue', 'post', res);
      }
      expect(limited[0]!.body.error).toBe('rate_limit_exceeded');
      expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });

    it('GET /healthz, /readyz and /openapi.json', async () => {
      for (const path of ['/healthz', '/readyz', '/openapi.json']) {
        const res = await get(path);
        expect(res.status).toBe(200);
        expectMatchesOpenApi(path, 'get', res);
      }
    });

    it('admin: list, show, 401, 404 and 400', async () => {
      const list = await get('/admin/v1/apps', admin());
      expect(list.status).toBe(200);
      expect(list.body.data.apps.length).toBeGreaterThanOrEqual(2);
      expectMatchesOpenApi('/admin/v1/apps', 'get', list);

      const one = await get(`/admin/v1/apps/${app.appKey}`, admin());
      expect(one.status).toBe(200);
      expectMatchesOpenApi(`/admin/v1/apps/${app.appKey}`, 'get', one);

      const cases: [string, Record<string, string>, number][] = [
        ['/admin/v1/apps', {}, 401],
        ['/admin/v1/apps', { authorization: 'Bearer wrong-token-wrong-token-wrong' }, 401],
        ['/admin/v1/apps/ak_doesnotexist', admin(), 404],
        ['/admin/v1/apps/not-a-key', admin(), 400],
      ];
      for (const [path, headers, status] of cases) {
        const res = await get(path, headers);
        expect(res.status).toBe(status);
        expectMatchesOpenApi(path, 'get', res);
      }
    });
  });
});

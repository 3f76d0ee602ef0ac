import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * Invariant 6: bad input gets a clear envelope {code: -1, error, message} and a 4xx, never a 5xx or a
 * crash, and the server keeps serving. Every case below goes through a real socket.
 */

const run = await databaseAvailable();

const VALIDATE = '/v1/validate';
const ISSUE = '/v1/server/challenge/issue';
const JSON_TYPE = 'application/json';
const FORM = 'application/x-www-form-urlencoded';

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
  text: string;
}

describe.runIf(run)('bad input', () => {
  let api: TestApi;
  let auth: Record<string, string>;

  beforeAll(async () => {
    api = await startTestApi();
    // Enterprise: the property test issues hundreds of tokens; the issuance rate limit is tested elsewhere.
    const app = await api.createApp({ name: 'fuzz', plan: 'enterprise' });
    auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
  });
  afterAll(() => api?.close());

  /** A raw request: any method, headers and body bytes; no content-type unless given. */
  async function send(
    path: string,
    init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
  ): Promise<Answer> {
    const res = await fetch(api.url + path, {
      method: init.method ?? 'POST',
      headers: init.headers ?? {},
      body:
        init.body === undefined
          ? undefined
          : typeof init.body === 'string'
            ? new TextEncoder().encode(init.body)
            : Uint8Array.from(init.body),
    });
    const text = await res.text();
    let body: Json = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, headers: res.headers, text };
  }

  /** The error envelope, with a 4xx and the given code. */
  function expectEnvelope(res: Answer, status: number, error: string) {
    expect(res.status, res.text).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      code: -1,
      error,
      message: expect.any(String),
      msg: expect.any(String),
      data: status === 200 ? { valid: false, error } : { error },
    });
    expect(res.body.message.length).toBeGreaterThan(0);
  }

  async function post(
    path: string,
    contentType: string | undefined,
    body: string | Uint8Array,
    withAuth = true,
  ) {
    const headers: Record<string, string> = withAuth ? { ...auth } : {};
    if (contentType !== undefined) headers['content-type'] = contentType;
    const res = await send(path, { headers, body });
    expectMatchesOpenApi(path, 'post', res);
    return res;
  }

  async function expectStillServing() {
    const res = await send('/healthz', { method: 'GET' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  }

  describe.each([VALIDATE, ISSUE])('%s', (path) => {
    it('answers malformed JSON with 400 invalid_request', async () => {
      for (const body of [
        '{',
        '{"pass_token":',
        "{'a':1}",
        '{"a":1,}',
        'undefined',
        '{"a":NaN}',
        '\u0000',
        '{}}',
      ]) {
        expectEnvelope(await post(path, JSON_TYPE, body), 400, 'invalid_request');
      }
      await expectStillServing();
    });

    it('answers JSON that is not an object (array, string, number, boolean, null) with 400', async () => {
      for (const body of ['[]', '[{"action":"login"}]', '"login"', '42', 'true', 'null']) {
        expectEnvelope(await post(path, JSON_TYPE, body), 400, 'invalid_request');
      }
    });

    it('answers an empty body with 4xx', async () => {
      const res = await post(path, JSON_TYPE, '');
      expect([400, 415]).toContain(res.status);
      expectEnvelope(res, res.status, res.status === 400 ? 'invalid_request' : 'unsupported_media_type');
      expectEnvelope(await post(path, JSON_TYPE, '{}'), 400, 'invalid_request');
    });

    it('answers content types it does not take with 415 unsupported_media_type', async () => {
      const body = path === VALIDATE ? '{"pass_token":"pt_x"}' : 'action=login';
      const types = [
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/octet-stream',
        'image/png',
        'json',
        'application/jsonx',
        undefined,
      ];
      if (path === VALIDATE) types.push(FORM);
      for (const type of types) {
        expectEnvelope(await post(path, type, body), 415, 'unsupported_media_type');
      }
      const multipart = '--x\r\nContent-Disposition: form-data; name="action"\r\n\r\nlogin\r\n--x--\r\n';
      expectEnvelope(
        await post(path, 'multipart/form-data; boundary=x', multipart),
        415,
        'unsupported_media_type',
      );
    });

    it('answers bodies larger than BODY_LIMIT_BYTES with 413 payload_too_large', async () => {
      const limit = api.config.bodyLimitBytes;
      const big = JSON.stringify({ pass_token: 'x'.repeat(limit), action: 'x'.repeat(limit) });
      expectEnvelope(await post(path, JSON_TYPE, big), 413, 'payload_too_large');
      // Forms are read (and measured) on every route, before the route says which types it takes.
      expectEnvelope(await post(path, FORM, `action=${'a'.repeat(limit + 1)}`), 413, 'payload_too_large');
      // A body just under the limit is read (and then refused for what it says, not its size).
      const under = JSON.stringify({ padding: 'p'.repeat(limit - 100) });
      expect(under.length).toBeLessThan(limit);
      expectEnvelope(await post(path, JSON_TYPE, under), 400, 'invalid_request');
      await expectStillServing();
    });

    it('answers undecodable compressed bodies with 4xx, and decodes a good gzip body', async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await send(path, {
          headers: { ...auth, 'content-type': JSON_TYPE, 'content-encoding': encoding },
          body: 'this is not compressed',
        });
        expectMatchesOpenApi(path, 'post', res);
        expectEnvelope(res, 400, 'invalid_request');
      }
      const bogus = await send(path, {
        headers: { ...auth, 'content-type': JSON_TYPE, 'content-encoding': 'bogus' },
        body: '{}',
      });
      expectEnvelope(bogus, 415, 'unsupported_media_type');
      const gz = await send(path, {
        headers: { ...auth, 'content-type': JSON_TYPE, 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify(path === VALIDATE ? { pass_token: 'pt_x.y' } : { action: 'login' })),
      });
      expect(gz.status).toBe(200);
      if (path === VALIDATE) expect(gz.body).toMatchObject({ error: 'token_not_found' });
      await expectStillServing();
    });

    it('answers a body in an unknown charset with 4xx', async () => {
      for (const charset of ['bogus-8', 'utf-16', 'utf-32', '']) {
        const res = await post(path, `application/json; charset=${charset}`, '{}');
        expect([400, 415]).toContain(res.status);
        expectEnvelope(res, res.status, res.status === 400 ? 'invalid_request' : 'unsupported_media_type');
      }
    });

    it('answers deeply nested JSON with 400', async () => {
      const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
      expectEnvelope(await post(path, JSON_TYPE, deep), 400, 'invalid_request');
      const deepField = `{"pass_token":${'{"a":'.repeat(1000)}1${'}'.repeat(1000)},"action":1}`;
      expectEnvelope(await post(path, JSON_TYPE, deepField), 400, 'invalid_request');
    });

    it('answers missing and wrong-typed fields with 400 naming the field', async () => {
      const field = path === VALIDATE ? 'pass_token' : 'action';
      for (const value of [undefined, null, 42, true, [], {}, ['x'], { $gt: '' }]) {
        const res = await post(path, JSON_TYPE, JSON.stringify({ [field]: value }));
        expectEnvelope(res, 400, 'invalid_request');
        expect(res.body.message).toContain(field);
      }
    });

    it('answers extremely long strings with 4xx', async () => {
      const field = path === VALIDATE ? 'pass_token' : 'action';
      for (const length of [1025, 4000, api.config.bodyLimitBytes - 50]) {
        const res = await post(path, JSON_TYPE, JSON.stringify({ [field]: `pt_${'A'.repeat(length)}` }));
        expectEnvelope(res, 400, 'invalid_request');
      }
      const longHeader = await send(path, {
        headers: {
          'X-App-Key': 'k'.repeat(8000),
          'X-App-Secret': 's'.repeat(4000),
          'content-type': JSON_TYPE,
        },
        body: '{}',
      });
      expectEnvelope(longHeader, 401, 'invalid_app_key');
    });

    it('answers unicode, NUL bytes and lone surrogates without a 5xx', async () => {
      const field = path === VALIDATE ? 'pass_token' : 'action';
      const expected = path === VALIDATE ? [200, 'token_not_found'] : [400, 'invalid_request'];
      // A NUL is refused at the boundary for every field (request-boundary.test.ts).
      for (const value of ['pt_\u0000', 'pt_a\u0000.b']) {
        const res = await post(path, JSON_TYPE, JSON.stringify({ [field]: value }));
        expectEnvelope(res, 400, 'invalid_request');
      }
      for (const value of ['pt_😀.😀', 'pt_\ud800.x', 'pt_\u202e.x', 'pt_\uffff', 'pt_\u0085.\u2028']) {
        const res = await post(path, JSON_TYPE, JSON.stringify({ [field]: value }));
        expectEnvelope(res, expected[0] as number, expected[1] as string);
      }
      // Raw invalid UTF-8 bytes inside a JSON string.
      const prefix = new TextEncoder().encode(`{"${field}":"pt_`);
      const bytes = new Uint8Array([...prefix, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
      const raw = await post(path, JSON_TYPE, bytes);
      // Decoded with replacement characters: a token that cannot exist (a 200 verdict) or a bad action.
      expectEnvelope(raw, expected[0] as number, expected[1] as string);
    });

    it('refuses __proto__ in JSON, ignores constructor.prototype, and leaves Object.prototype alone', async () => {
      const good = path === VALIDATE ? '"pass_token":"pt_x.y"' : '"action":"login"';
      // The JSON parser refuses any __proto__ key outright.
      for (const body of [
        `{${good},"__proto__":{"polluted":1}}`,
        `{"__proto__":{${good}}}`,
        `{${good},"__proto__":1}`,
        `{${good},"nested":{"__proto__":{"polluted":1}}}`,
      ]) {
        expectEnvelope(await post(path, JSON_TYPE, body), 400, 'invalid_request');
      }
      // constructor.prototype is an ordinary unknown field: ignored by issue, refused by validate (which
      // refuses every field it does not know).
      const ctor = await post(path, JSON_TYPE, `{${good},"constructor":{"prototype":{"polluted":1}}}`);
      expect(ctor.status).toBe(path === VALIDATE ? 400 : 200);
      if (path === ISSUE) {
        // The form parser drops __proto__ keys: a field inside one is not read as the body's own.
        expectEnvelope(await post(path, FORM, '__proto__[action]=login'), 400, 'invalid_request');
        for (const form of [
          'action=login&__proto__[polluted]=1',
          'action=login&constructor[prototype][polluted]=1',
          'action=login&__proto__[action]=pay',
        ]) {
          expect((await post(path, FORM, form)).status).toBe(200);
        }
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect(Object.prototype).not.toHaveProperty('action');
      expect(Object.prototype).not.toHaveProperty('pass_token');
    });
  });

  describe('form bodies of the issue endpoint', () => {
    it('answers nested fields (a[b]=c) and repeated fields with 400 naming the field', async () => {
      for (const form of [
        'action[b]=c',
        'action[]=login',
        'action=login&action=pay',
        'action=login&ttl[x]=1',
        'action=login&ttl=1&ttl=2',
        'action=login&max_uses[]=3',
        'action=login&bind_ip[a]=1.2.3.4',
        `action${'[a]'.repeat(50)}=1`,
      ]) {
        const res = await post(ISSUE, FORM, form);
        expectEnvelope(res, 400, 'invalid_request');
      }
    });

    it('answers odd encodings without a 5xx', async () => {
      for (const form of ['%', '%%', 'action=%E0%A4%A', '&&&', '=', 'action', 'action=log%00in', '+=+']) {
        const res = await post(ISSUE, FORM, form);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe(-1);
      }
      expect((await post(ISSUE, FORM, 'action=login&%00=%00')).status).toBe(400);
      for (const form of ['action=login&unknown=1&a[b]=c', 'action=login&%=%']) {
        expect((await post(ISSUE, FORM, form)).status).toBe(200);
      }
    });
  });

  describe('routes and methods', () => {
    it('answers unknown routes with 404 not_found', async () => {
      // `/` answers GET (the root page: api/test/root-docs.test.ts); anything else there is 405.
      expectEnvelope(await send('/', { method: 'POST', headers: auth }), 405, 'method_not_allowed');
      for (const path of [
        '/nope',
        '/v1',
        '/v1/validat',
        '/v1/validate/extra',
        '/v2/validate',
        '/v1/server/challenge',
        '/%E0%A4%A',
        `/${'a'.repeat(4000)}`,
      ]) {
        for (const method of ['GET', 'POST']) {
          expectEnvelope(await send(path, { method, headers: auth }), 404, 'not_found');
        }
      }
    });

    it('answers other methods on the two endpoints with 405 method_not_allowed, naming POST', async () => {
      for (const path of [VALIDATE, ISSUE]) {
        for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'PROPFIND']) {
          const res = await send(path, {
            method,
            headers: auth,
            ...(method === 'GET' ? {} : { body: '{}' }),
          });
          expectEnvelope(res, 405, 'method_not_allowed');
          expect(res.headers.get('allow')).toContain('POST');
        }
      }
      await expectStillServing();
    });
  });

  it('never answers 5xx to random bodies, headers and content types, and keeps serving', async () => {
    const field = fc.constantFrom(
      'pass_token',
      'client_ip',
      'idempotency_key',
      'keep_token',
      'action',
      'ttl',
      'max_uses',
      'bind_ip',
      'binding_ip',
      'bind_device_id',
      'bind_fingerprint',
      'bind_uid',
      '__proto__',
      'constructor',
    );
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.constantFrom(
        'login',
        'pt_x.y',
        'dg_x.y',
        '203.0.113.7',
        '::ffff:1.2.3.4',
        '900',
        '901',
        'true',
        '\u0000',
      ),
      fc.integer(),
      fc.double(),
    );
    const objectBody = fc.dictionary(field, value, { maxKeys: 6 });
    const body = fc.oneof(
      objectBody.map((o) => JSON.stringify(o)),
      objectBody.map((o) =>
        Object.entries(o)
          .map(
            ([k, v]) =>
              `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`,
          )
          .join('&'),
      ),
      fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.uint8Array({ maxLength: 300 }),
    );
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 80,
    });
    const contentType = fc.option(
      fc.oneof(
        fc.constantFrom(
          JSON_TYPE,
          FORM,
          'application/json; charset=utf-8',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          `${FORM}; charset=utf-8`,
          'text/plain',
          'multipart/form-data; boundary=x',
          'application/vnd.api+json',
          'application/merge-patch+json',
          '*/*',
          ';',
        ),
        printable,
      ),
      { nil: undefined },
    );
    const credentials = fc.constantFrom('good', 'none', 'wrong-key', 'wrong-secret', 'key-only');
    const extraHeaders = fc.record(
      {
        'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus', 'gzip, br'),
        'x-request-id': printable,
        accept: printable,
        'x-forwarded-for': printable,
      },
      { requiredKeys: [] },
    );
    const method = fc.constantFrom('POST', 'POST', 'POST', 'POST', 'PUT', 'PATCH', 'GET', 'DELETE');

    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(VALIDATE, ISSUE),
        method,
        contentType,
        credentials,
        extraHeaders,
        body,
        async (path, verb, type, creds, extra, payload) => {
          const headers: Record<string, string> = { ...extra };
          if (type !== undefined) headers['content-type'] = type;
          if (creds === 'good' || creds === 'wrong-secret' || creds === 'key-only')
            headers['X-App-Key'] = auth['X-App-Key']!;
          if (creds === 'wrong-key') headers['X-App-Key'] = 'ak_nobody';
          if (creds === 'good' || creds === 'wrong-key') headers['X-App-Secret'] = auth['X-App-Secret']!;
          if (creds === 'wrong-secret') headers['X-App-Secret'] = 'sk_wrong';
          const res = await send(path, {
            method: verb,
            headers,
            ...(verb === 'GET' ? {} : { body: payload }),
          });
          requests++;
          expect(res.status, res.text).toBeLessThan(500);
          expect(res.status).toBeGreaterThanOrEqual(200);
          if (res.status >= 400 || res.body.code === -1) {
            expect(res.body).toEqual({
              code: -1,
              error: expect.any(String),
              message: expect.any(String),
              msg: expect.any(String),
              data: expect.objectContaining({ error: res.body.error }),
            });
          } else {
            expect(res.body).toEqual({ code: 0, data: expect.any(Object) });
          }
          if (verb === 'POST') expectMatchesOpenApi(path, 'post', res);
        },
      ),
      { numRuns: 400 },
    );
    expect(requests).toBeGreaterThanOrEqual(400);
    await expectStillServing();
  }, 120_000);
});

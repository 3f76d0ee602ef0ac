import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';

/*
 * JSON bodies sent with a length or chunked, as `application/json` or another JSON media type, must answer
 * alike: these requests go through a real socket and expect the same answers. (Plain JSON bodies had a
 * direct reader of their own, core/src/http/json-body.ts, until interleaved runs showed it bought no API
 * CPU on the invisible init, issue 14: every body takes the general parser again.)
 */
const run = await databaseAvailable();

interface Answer {
  status: number;
  body: Json;
}

describe.runIf(run)('JSON bodies, read directly or by the general parser', () => {
  let api: TestApi;
  let auth: Record<string, string>;
  let token: string;

  beforeAll(async () => {
    api = await startTestApi();
    const app = await api.createApp({ name: 'json-body', plan: 'enterprise' });
    auth = { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret };
    token = 'pt_eyJpZCI6IngiLCJhcHAiOiJ5IiwiZXhwIjoxfQ.AAAAAAAAAAAAAAAAAAAAAA';
  });
  afterAll(() => api?.close());

  /** POST /v1/validate with exactly these bytes; `chunked` sends no Content-Length (the general parser). */
  function send(type: string, body: Buffer, chunked = false): Promise<Answer> {
    const url = new URL('/v1/validate', api.url);
    return new Promise((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': type,
          ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }),
        },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** The same bytes through both readers: the answers must be equal, and are returned. */
  async function both(body: string | Buffer, type = 'application/json'): Promise<Answer> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const direct = await send(type, bytes);
    const general = await send(type, bytes, true);
    expect(direct, `${type} ${bytes.toString('utf8')}`).toEqual(general);
    return direct;
  }

  it('parses a plain JSON body to the same verdict as the general parser', async () => {
    const answer = await both(JSON.stringify({ pass_token: token }));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: -1, error: 'token_not_found' });
    expect(
      (await both(JSON.stringify({ pass_token: token }), 'application/json; charset=utf-8')).status,
    ).toBe(200);
  });

  it('skips a UTF-8 byte order mark, as the general parser does', async () => {
    const bom = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify({ pass_token: token })),
    ]);
    expect((await both(bom)).body).toMatchObject({ error: 'token_not_found' });
  });

  it('refuses non-JSON, scalars, and __proto__ keys spelled with escapes, with 400 invalid_request', async () => {
    for (const body of [
      '{"pass_token":',
      '"pt_x"',
      '42',
      'null',
      `{"pass_token":"${token}","\\u005f_proto__":{"polluted":1}}`,
      `{"pass_token":"${token}","a":[{"__\\u0070roto__":1}]}`,
    ]) {
      const answer = await both(body);
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toMatchObject({ code: -1, error: 'invalid_request' });
    }
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('answers an empty body as an empty object: 400 naming the missing field', async () => {
    const answer = await both('');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('pass_token'),
    });
  });

  it('keeps the escapes that are not __proto__, and other JSON media types still parse', async () => {
    // \u0070 is "p": a valid token field spelled with an escape is the same field.
    const escaped = `{"\\u0070ass_token":"${token}"}`;
    expect((await both(escaped)).body).toMatchObject({ error: 'token_not_found' });
    const other = await send('application/vnd.api+json', Buffer.from(JSON.stringify({ pass_token: token })));
    expect(other.status).toBe(415); // validate takes application/json only, whichever parser read it
  });
});

import { request } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateBody } from '../src/routes/validate.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';

/*
 * JSON bodies sent with a length or chunked, as `application/json` or another JSON media type, must answer
 * alike: these requests go through a real socket and expect the same answers. A plain JSON body with a
 * length is read by jsonBodies (core/src/http/body.ts), a chunked one by the general parser
 * (@koa/bodyparser), so each pair below compares the two readers.
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

  it('finds a NUL sent as \\u0000 in a key or value, and takes an escaped backslash before u0000 as text', async () => {
    for (const body of [`{"pass_token":"${token}\\u0000"}`, `{"pass_token":"${token}","a\\u0000b":1}`]) {
      const answer = await both(body);
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toMatchObject({
        error: 'invalid_request',
        message: expect.stringContaining('NUL'),
      });
    }
    // "\\u0000" in JSON text is a backslash, then "u0000": six characters, no NUL. The field is unknown
    // (validate refuses unknown fields), which is the answer the general parser gives too.
    const literal = await both(`{"pass_token":"${token}","note\\\\u0000":1}`);
    expect(literal.status).toBe(400);
    expect(literal.body).toMatchObject({ error: 'invalid_request' });
    expect(JSON.stringify(literal.body)).not.toContain('NUL');
  });

  it('answers any body, JSON or not, as the general parser does (fast-check over real HTTP)', async () => {
    // validate's own fields (from its schema, so the list cannot drift), and the pollution key.
    const field = fc.constantFrom(...Object.keys(validateBody.shape), '__proto__');
    const body = fc.oneof(
      // Near-valid bodies: the known fields with any JSON values, sometimes with NULs and escapes in them.
      fc
        .dictionary(field, fc.jsonValue({ maxDepth: 2 }))
        .map((o) => JSON.stringify({ pass_token: token, ...o })),
      fc.json({ maxDepth: 3 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
      fc
        .tuple(fc.json({ maxDepth: 2 }), fc.nat({ max: 30 }), fc.string({ maxLength: 3 }))
        .map(([json, at, cut]) => json.slice(0, at) + cut + json.slice(at)),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const answer = await both(b);
        // Never a server error, whatever the bytes.
        expect(answer.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('refuses a body over the limit with 413, whether its length is declared or it is chunked', async () => {
    const big = JSON.stringify({ pass_token: token, pad: 'x'.repeat(20_000) });
    const answer = await both(big);
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: -1, error: 'payload_too_large' });
  });

  it('a client that stops before its declared length gets no hang, and the server answers the next', async () => {
    const { port } = new URL(api.url);
    const answered = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /v1/validate HTTP/1.1\r\nHost: x\r\nX-App-Key: ${auth['X-App-Key']}\r\n` +
            `X-App-Secret: ${auth['X-App-Secret']}\r\nContent-Type: application/json\r\n` +
            'Content-Length: 100\r\n\r\n{"pass_token":',
        );
        socket.end();
      });
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString('utf8');
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5000, () => reject(new Error('the server held the cut-short request open')));
    });
    // Either a 400 on the half-closed socket or the connection closed without one: never a 2xx, never a hang.
    expect(answered === '' || answered.startsWith('HTTP/1.1 400')).toBe(true);
    const next = await both(JSON.stringify({ pass_token: token }));
    expect(next.body).toMatchObject({ error: 'token_not_found' });
  });
});

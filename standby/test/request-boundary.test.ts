import { beforeAll, describe, expect, it } from 'vitest';
import { standbyWithApi } from './harness.ts';

/*
 * The main API's request boundary at the standby's door too (it shares readBody and utf8Only with the main
 * API): a body in another charset than UTF-8 answers 415, a NUL in a body answers 400, on both roles.
 */
describe('standby request boundary', () => {
  const s = standbyWithApi('boundary');
  beforeAll(() => s.standby.health.setMode('serve'));

  async function post(role: 'bypass' | 'fallback', path: string, type: string, body: unknown) {
    const res = await fetch(s.standby.urls[role]! + path, {
      method: 'POST',
      headers: { ...s.auth, 'content-type': type },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { code: number; error: string; message: string },
    };
  }

  const cases = () =>
    [
      ['bypass', '/v1/challenge/init', { app_key: s.appKey, action: 'login' }],
      ['fallback', '/api/validate', { pass_token: 'offline_x.y' }],
    ] as const;

  it('answers 415 for a body declared in another charset than UTF-8', async () => {
    for (const [role, path, body] of cases()) {
      for (const charset of ['utf-16', 'ISO-8859-1']) {
        const res = await post(role, path, `application/json; charset=${charset}`, body);
        expect(res.status, `${role} ${path} ${charset}`).toBe(415);
        expect(res.body).toMatchObject({ code: -1, error: 'unsupported_media_type' });
      }
    }
  });

  it('answers 400 naming the field for a NUL in any string of the body', async () => {
    for (const [role, path, body] of cases()) {
      const field = Object.keys(body)[0]!;
      const res = await post(role, path, 'application/json', { ...body, [field]: 'a\u0000b' });
      expect(res.status, `${role} ${path}`).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.message).toContain(field);
    }
  });
});

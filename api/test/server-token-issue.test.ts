import { randomBytes } from 'node:crypto';
import { randomId } from '@gatehouse/core/crypto';
import type { Database } from '@gatehouse/core/db';
import { serverTokens } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { TokenKeys } from '@gatehouse/core/tokens';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  issueServerToken,
  issueServerTokenBody,
  SERVER_TOKEN_LIMITS,
  type ServerTokenPresentation,
  useServerToken,
} from '../src/tokens/server-tokens.ts';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

const run = await databaseAvailable();

type Creds = { appKey: string; appSecret: string; appId: string };
const PATH = '/v1/server/challenge/issue';
const FORM = 'application/x-www-form-urlencoded';

describe.runIf(run)('POST /v1/server/challenge/issue', () => {
  let api: TestApi;
  let app: Creds;

  beforeAll(async () => {
    api = await startTestApi();
    // Enterprise: these tests issue many tokens, and the issuance rate limit is not what they are about.
    app = await api.createApp({ name: 'issuer', plan: 'enterprise' });
  });
  afterAll(() => api?.close());

  const auth = (c: Creds) => ({ 'X-App-Key': c.appKey, 'X-App-Secret': c.appSecret });

  async function issueJson(body: Json) {
    const res = await api.post(PATH, body, auth(app));
    expectMatchesOpenApi(PATH, 'post', res);
    return res;
  }
  async function issueForm(body: string | Record<string, string>) {
    const text = typeof body === 'string' ? body : new URLSearchParams(body).toString();
    const res = await api.post(PATH, text, { ...auth(app), 'content-type': FORM });
    expectMatchesOpenApi(PATH, 'post', res);
    return res;
  }
  async function row(serverToken: string) {
    const payload = api.runtime.keys.openServer(serverToken);
    expect(payload).not.toBeNull();
    const [found] = await api.runtime.db.select().from(serverTokens).where(eq(serverTokens.id, payload!.id));
    expect(found).toBeDefined();
    return { payload: payload!, row: found! };
  }
  function expectInvalid(res: { status: number; body: Json }, field?: string) {
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: -1, error: 'invalid_request' });
    if (field) expect(res.body.message).toContain(field);
  }

  it('issues from a form-urlencoded body (the spec) with the documented defaults', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await issueForm({ action: 'login' });
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(200);
    expect(res.body.code).toBe(0);
    expect(Object.keys(res.body.data).sort()).toEqual(['expires_in', 'issued_at', 'server_token']);
    const { server_token, expires_in, issued_at } = res.body.data;
    expect(server_token).toMatch(/^sct_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(expires_in).toBe(300);
    expect(Number.isInteger(issued_at)).toBe(true);
    expect(issued_at).toBeGreaterThanOrEqual(before);
    expect(issued_at).toBeLessThanOrEqual(after);

    const { payload, row: stored } = await row(server_token);
    expect(payload).toMatchObject({ app: app.appId, exp: issued_at + 300 });
    expect(stored).toMatchObject({
      appId: app.appId,
      action: 'login',
      maxUses: 10,
      uses: 0,
      bindIp: null,
      bindDeviceId: null,
      bindFingerprint: null,
      bindUid: null,
    });
    expect(stored.issuedAt.getTime()).toBe(issued_at * 1000);
    expect(stored.expiresAt.getTime() - stored.issuedAt.getTime()).toBe(300_000);
  });

  it('issues from a JSON body (what public SDKs send)', async () => {
    const res = await issueJson({ action: 'pay', ttl: 600, max_uses: 3 });
    expect(res.status).toBe(200);
    expect(res.body.data.expires_in).toBe(600);
    const { payload, row: stored } = await row(res.body.data.server_token);
    expect(stored).toMatchObject({ action: 'pay', maxUses: 3 });
    expect(payload.exp).toBe(res.body.data.issued_at + 600);
  });

  it('takes numbers as strings in forms and numbers in JSON', async () => {
    expect((await issueForm('action=login&ttl=120&max_uses=5')).body.data.expires_in).toBe(120);
    expect((await issueJson({ action: 'login', ttl: '120', max_uses: '5' })).body.data.expires_in).toBe(120);
  });

  it('issues distinct tokens every time', async () => {
    const a = (await issueJson({ action: 'login' })).body.data.server_token;
    const b = (await issueJson({ action: 'login' })).body.data.server_token;
    expect(a).not.toBe(b);
  });

  describe('ttl', () => {
    it('accepts the maximum, 900', async () => {
      const res = await issueForm({ action: 'login', ttl: '900' });
      expect(res.status).toBe(200);
      expect(res.body.data.expires_in).toBe(900);
      const { row: stored } = await row(res.body.data.server_token);
      expect(stored.expiresAt.getTime() - stored.issuedAt.getTime()).toBe(900_000);
    });

    it('clamps more than 900 to 900, in forms and JSON, and expires_in says so', async () => {
      for (const res of [
        await issueForm({ action: 'login', ttl: '901' }),
        await issueJson({ action: 'login', ttl: 901 }),
        await issueJson({ action: 'login', ttl: 86_400 }),
        await issueForm({ action: 'login', ttl: '999999999' }),
      ]) {
        expect(res.status).toBe(200);
        expect(res.body.data.expires_in).toBe(900);
        const { row: stored } = await row(res.body.data.server_token);
        expect(stored.expiresAt.getTime() - stored.issuedAt.getTime()).toBe(900_000);
      }
    });

    it('rejects 0, negatives, fractions and non-numbers', async () => {
      for (const ttl of [0, -1, 1.5, '0', '-5', '1.5', '1e3', 'abc', '', true, null, [300], { n: 1 }]) {
        expectInvalid(await issueJson({ action: 'login', ttl }), 'ttl');
      }
      for (const ttl of ['0', '-5', '1.5', '', ' 300', '0x10', '9999999999', '1e3']) {
        expectInvalid(await issueForm({ action: 'login', ttl }), 'ttl');
      }
    });

    it('accepts the minimum, 1', async () => {
      expect((await issueJson({ action: 'login', ttl: 1 })).body.data.expires_in).toBe(1);
    });
  });

  describe('max_uses', () => {
    it('accepts 1 and the documented maximum, 1000', async () => {
      for (const maxUses of [1, SERVER_TOKEN_LIMITS.maxUsesMax]) {
        const res = await issueJson({ action: 'login', max_uses: maxUses });
        expect(res.status).toBe(200);
        expect((await row(res.body.data.server_token)).row.maxUses).toBe(maxUses);
      }
    });

    it('rejects more than 1000, 0, negatives and non-integers with 400', async () => {
      for (const max_uses of [1001, 1_000_000, 0, -1, 2.5, '1001', 'ten', false]) {
        expectInvalid(await issueJson({ action: 'login', max_uses }), 'max_uses');
      }
      expectInvalid(await issueForm({ action: 'login', max_uses: '1001' }), 'max_uses');
    });

    it('is documented with its maximum in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as Json;
      const schema = doc.paths[PATH].post.requestBody.content[FORM].schema;
      expect(schema.properties.max_uses.maximum).toBe(1000);
      expect(schema.properties.ttl.description).toContain('clamped to 900');
    });
  });

  describe('bindings', () => {
    it('stores bind_ip, bind_device_id, bind_fingerprint and bind_uid', async () => {
      const res = await issueForm({
        action: 'login',
        bind_ip: '203.0.113.7',
        bind_device_id: 'device-1',
        bind_fingerprint: 'fp-abc',
        bind_uid: 'user-9',
      });
      expect(res.status).toBe(200);
      expect((await row(res.body.data.server_token)).row).toMatchObject({
        bindIp: '203.0.113.7',
        bindDeviceId: 'device-1',
        bindFingerprint: 'fp-abc',
        bindUid: 'user-9',
      });
    });

    it('takes binding_ip as an alias of bind_ip', async () => {
      const res = await issueJson({ action: 'login', binding_ip: '198.51.100.20' });
      expect((await row(res.body.data.server_token)).row.bindIp).toBe('198.51.100.20');
      const both = await issueJson({
        action: 'login',
        bind_ip: '198.51.100.20',
        binding_ip: '198.51.100.20',
      });
      expect((await row(both.body.data.server_token)).row.bindIp).toBe('198.51.100.20');
    });

    it('stores IPs in canonical form (IPv4-mapped folded, IPv6 compressed)', async () => {
      const mapped = await issueJson({ action: 'login', bind_ip: '::ffff:203.0.113.7' });
      expect((await row(mapped.body.data.server_token)).row.bindIp).toBe('203.0.113.7');
      const v6 = await issueJson({ action: 'login', bind_ip: '2001:0DB8:0000:0000::0001' });
      expect((await row(v6.body.data.server_token)).row.bindIp).toBe('2001:db8::1');
    });

    it('rejects a bind_ip that is not an IP, and bind_ip and binding_ip that disagree', async () => {
      for (const bind_ip of ['nope', '1.2.3', '010.0.0.1', '::1%eth0', '', 5]) {
        expectInvalid(await issueJson({ action: 'login', bind_ip }), 'bind_ip');
      }
      expectInvalid(await issueJson({ action: 'login', binding_ip: 'nope' }), 'binding_ip');
      expectInvalid(
        await issueJson({ action: 'login', bind_ip: '203.0.113.7', binding_ip: '203.0.113.8' }),
        'bind_ip',
      );
    });

    it('rejects empty, oversize and control-character binding values', async () => {
      for (const [field, max] of [
        ['bind_device_id', 128],
        ['bind_fingerprint', 256],
        ['bind_uid', 128],
      ] as const) {
        expect((await issueJson({ action: 'login', [field]: 'x'.repeat(max) })).status).toBe(200);
        for (const bad of ['', 'x'.repeat(max + 1), 'a\u0000b', 'line\nbreak', 'a\ud800b', 7]) {
          expectInvalid(await issueJson({ action: 'login', [field]: bad }), field);
        }
      }
    });
  });

  describe('action', () => {
    it('is required', async () => {
      expectInvalid(await issueForm(''), 'action');
      expectInvalid(await issueForm({ ttl: '300' }), 'action');
      expectInvalid(await issueJson({}), 'action');
      expectInvalid(await issueJson({ ttl: 300 }), 'action');
    });

    it('must be 1 to 64 characters of letters, digits, _ . : or -', async () => {
      expect((await issueJson({ action: 'a'.repeat(64) })).status).toBe(200);
      expect((await issueJson({ action: 'checkout:step-2.v_1' })).status).toBe(200);
      for (const action of ['', 'a'.repeat(65), 'log in', 'lögin', 'a/b', 'a\u0000', 5, null, ['login']]) {
        expectInvalid(await issueJson({ action }), 'action');
      }
    });
  });
});

describe.runIf(run)('useServerToken (challenge initialization, library level)', () => {
  let api: TestApi;
  let db: Database;
  let keys: TokenKeys;
  let appId: string;
  let otherAppId: string;
  const app = () => ({ id: appId });
  const seen = (over: Partial<ServerTokenPresentation> = {}): ServerTokenPresentation => ({
    action: 'login',
    ip: '203.0.113.7',
    ...over,
  });

  beforeAll(async () => {
    api = await startTestApi();
    db = api.runtime.db;
    keys = api.runtime.keys;
    appId = (await api.createApp({ name: 'a' })).appId;
    otherAppId = (await api.createApp({ name: 'b' })).appId;
  });
  afterAll(() => api?.close());

  async function issue(body: Record<string, unknown> = {}, forApp = appId) {
    const issued = await issueServerToken(
      db,
      keys,
      { id: forApp },
      issueServerTokenBody.parse({ action: 'login', ...body }),
    );
    return issued.server_token;
  }
  async function uses(token: string) {
    const [found] = await db
      .select()
      .from(serverTokens)
      .where(eq(serverTokens.id, keys.openServer(token)!.id));
    return found!.uses;
  }
  async function refusal(promise: Promise<unknown>): Promise<string> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatehouseError);
    return (error as GatehouseError).code;
  }

  it('accepts a valid token and counts each use', async () => {
    const token = await issue({ max_uses: 3 });
    expect(await useServerToken(db, keys, app(), token, seen())).toEqual({ uid: null });
    expect(await uses(token)).toBe(1);
    await useServerToken(db, keys, app(), token, seen());
    expect(await uses(token)).toBe(2);
  });

  it('counts max_uses atomically: 25 concurrent uses of a max_uses 10 token, exactly 10 succeed', async () => {
    const token = await issue({ max_uses: 10 });
    const results = await Promise.allSettled(
      Array.from({ length: 25 }, () => useServerToken(db, keys, app(), token, seen())),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(15);
    for (const r of refused) expect((r.reason as GatehouseError).code).toBe('server_token_exhausted');
    expect(await uses(token)).toBe(10);
    expect(await refusal(useServerToken(db, keys, app(), token, seen()))).toBe('server_token_exhausted');
  });

  it('refuses an expired token with server_token_expired', async () => {
    const id = randomId(16);
    const past = Math.floor(Date.now() / 1000) - 5;
    await db.insert(serverTokens).values({
      id,
      appId,
      action: 'login',
      maxUses: 10,
      issuedAt: new Date((past - 300) * 1000),
      expiresAt: new Date(past * 1000),
    });
    const token = keys.sealServer({ id, app: appId, exp: past });
    expect(await refusal(useServerToken(db, keys, app(), token, seen()))).toBe('server_token_expired');
  });

  it('refuses another action with server_token_action_mismatch, without counting a use', async () => {
    const token = await issue({ max_uses: 1 });
    expect(await refusal(useServerToken(db, keys, app(), token, seen({ action: 'register' })))).toBe(
      'server_token_action_mismatch',
    );
    expect(await uses(token)).toBe(0);
    await useServerToken(db, keys, app(), token, seen());
  });

  it('refuses each binding mismatch with server_token_binding_mismatch, without counting a use', async () => {
    const token = await issue({
      max_uses: 1,
      bind_ip: '203.0.113.7',
      bind_device_id: 'dev-1',
      bind_fingerprint: 'fp-1',
      bind_uid: 'user-1',
    });
    const good = seen({ ip: '203.0.113.7', deviceId: 'dev-1', fingerprint: 'fp-1' });
    const mismatches: Partial<ServerTokenPresentation>[] = [
      { ip: '203.0.113.8' }, // same /24 still differs: a bound IP is exact
      { ip: '2001:db8::1' },
      { deviceId: 'dev-2' },
      { deviceId: undefined },
      { fingerprint: 'fp-2' },
      { fingerprint: undefined },
    ];
    for (const over of mismatches) {
      expect(await refusal(useServerToken(db, keys, app(), token, { ...good, ...over }))).toBe(
        'server_token_binding_mismatch',
      );
    }
    expect(await uses(token)).toBe(0);
    // The IPv4-mapped form of the bound IP is the same address.
    expect(await useServerToken(db, keys, app(), token, { ...good, ip: '::ffff:203.0.113.7' })).toEqual({
      uid: 'user-1',
    });
    expect(await uses(token)).toBe(1);
  });

  it('refuses forged, altered, foreign and unknown tokens with server_token_invalid', async () => {
    const token = await issue();
    const [body, mac] = token.slice(4).split('.') as [string, string];
    const payload = keys.openServer(token)!;
    const cases = [
      `${token}A`,
      `sct_${body}.${mac.slice(1)}`,
      `sct_${Buffer.from(JSON.stringify({ ...payload, exp: payload.exp + 1000 })).toString('base64url')}.${mac}`,
      new TokenKeys(randomBytes(32)).sealServer(payload),
      keys.sealPass(payload),
      `pt_${body}.${mac}`,
      keys.sealServer({ id: randomId(16), app: appId, exp: payload.exp }),
      await issue({}, otherAppId),
      '',
      'sct_',
    ];
    for (const bad of cases) {
      expect(await refusal(useServerToken(db, keys, app(), bad, seen()))).toBe('server_token_invalid');
    }
    expect(await uses(token)).toBe(0);
  });

  it('refuses forged tokens before touching the database (invariant 4)', async () => {
    const untouchable = new Proxy({} as Database, {
      get(_, property) {
        throw new Error(`the database was touched (${String(property)})`);
      },
    });
    const token = await issue();
    for (const bad of [`${token}A`, new TokenKeys(randomBytes(32)).sealServer(keys.openServer(token)!)]) {
      expect(await refusal(useServerToken(untouchable, keys, app(), bad, seen()))).toBe(
        'server_token_invalid',
      );
    }
  });
});

import { describe, expect, it } from 'vitest';
import { Gatehouse } from './client.ts';
import { GatehouseApiError, GatehouseConfigError, GatehouseConnectionError } from './errors.ts';
import { DISCOVERY_RETRY_MS, DISCOVERY_TTL_MS, StandbyDirectory } from './standby.ts';

/**
 * Continuity in the server SDK: which host each token goes to, failing over between them, discovery.
 * The fetch answers by host, so the order of requests is what the SDK chose.
 */

type Reply = Response | Error | 'hang';
const MAIN = 'https://gh.example.com';
const FB1 = 'https://fallbackapiv1-a.example.com';
const FB2 = 'https://fallbackapiv1-b.example.com';

function hosts(script: Record<string, Reply[]>) {
  const calls: { url: string; method: string; key: string | undefined; body: Record<string, unknown> }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    const body = init.body ? JSON.parse(String(init.body)) : {};
    calls.push({ url, method: init.method ?? 'GET', key: body.idempotency_key, body });
    const host = new URL(url).origin;
    const reply = script[host]?.shift();
    if (!reply) throw new Error(`no scripted answer for ${init.method} ${url}`);
    if (reply === 'hang') {
      return new Promise((_, reject) =>
        init.signal!.addEventListener('abort', () => reject(init.signal!.reason)),
      );
    }
    if (reply instanceof Error) throw reply;
    return reply;
  }) as typeof globalThis.fetch;
  return { fetch, calls, urls: () => calls.map((c) => `${c.method} ${c.url}`) };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const ok = (data: object) => json(200, { code: 0, data });
const fail = (status: number, error: string) => json(status, { code: -1, error, message: error });
const down = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
const offlineData = { valid: true, challenge_id: 'ch_o', action: 'login', uid: null, offline: true };
const creds = { appKey: 'ak_t', appSecret: 'sk_t', baseUrl: MAIN };
const client = (fetch: typeof globalThis.fetch, extra: object = {}) =>
  new Gatehouse({ ...creds, fetch, backupServers: [FB1, FB2], timeoutMs: 200, ...extra } as never);

describe('offline_ routing', () => {
  it('goes to backup host 1 first, never to the main API first', async () => {
    const h = hosts({ [FB1]: [ok(offlineData)] });
    const verdict = await client(h.fetch).validate('offline_t', { expectedAction: 'login' });
    expect(verdict).toMatchObject({ valid: true, accepted: true, offline: true });
    expect(h.urls()).toEqual([`POST ${FB1}/api/validate`]);
  });

  it('moves to host 2 on no answer, a timeout or a 5xx, then to the main API, with one key throughout', async () => {
    const h = hosts({ [FB1]: ['hang'], [FB2]: [fail(500, 'internal_error')], [MAIN]: [ok(offlineData)] });
    const verdict = await client(h.fetch).validate('offline_t', { clientIp: '203.0.113.9' });
    expect(verdict.valid).toBe(true);
    expect(h.urls()).toEqual([
      `POST ${FB1}/api/validate`,
      `POST ${FB2}/api/validate`,
      `POST ${MAIN}/v1/validate`,
    ]);
    expect(new Set(h.calls.map((c) => c.key)).size).toBe(1);
    expect(h.calls.every((c) => c.body.client_ip === '203.0.113.9')).toBe(true);
  });

  it('service_online from a backup host sends the call to the main API at once', async () => {
    const h = hosts({ [FB1]: [fail(503, 'service_online')], [MAIN]: [ok(offlineData)] });
    await client(h.fetch).validate('offline_t');
    expect(h.urls()).toEqual([`POST ${FB1}/api/validate`, `POST ${MAIN}/v1/validate`]);
  });

  it('a token verdict or a 4xx from a backup host is final', async () => {
    const used = hosts({ [FB1]: [fail(409, 'token_already_used')] });
    expect(await client(used.fetch).validate('offline_t')).toMatchObject({
      valid: false,
      offline: true,
      errorCode: 'token_already_used',
    });
    const secret = hosts({ [FB1]: [fail(401, 'invalid_app_secret')] });
    await expect(client(secret.fetch).validate('offline_t')).rejects.toMatchObject({
      code: 'invalid_app_secret',
    });
    expect(used.calls).toHaveLength(1);
    expect(secret.calls).toHaveLength(1);
  });

  it('every host down: each backup host once, the main API with its retries, then a connection error', async () => {
    const h = hosts({ [FB1]: [down()], [FB2]: [down()], [MAIN]: [down(), down()] });
    const error = await client(h.fetch, { maxRetries: 1 })
      .validate('offline_t')
      .catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseConnectionError);
    expect(error.message).toBe(
      `Could not reach Gatehouse at ${MAIN}/v1/validate (2 attempts): ECONNREFUSED; the backup hosts ${FB1}, ${FB2} failed first.`,
    );
    expect(h.calls).toHaveLength(4);
  });
});

describe('pt_ and dg_ never leave the main API', () => {
  it.each(['pt_t', 'dg_t'])(
    '%s: 5xx and no answer are retried on the main API, then an error',
    async (token) => {
      const h = hosts({ [MAIN]: [fail(502, 'bad_gateway'), down(), fail(503, 'service_unavailable')] });
      const error = await client(h.fetch)
        .validate(token)
        .catch((e) => e);
      expect(error).toBeInstanceOf(GatehouseApiError);
      expect(error).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(h.urls()).toEqual(Array(3).fill(`POST ${MAIN}/v1/validate`));
    },
  );

  it('co_ is never valid and asks nobody, not even for discovery', async () => {
    const h = hosts({});
    const verdict = await client(h.fetch, { backupServers: undefined }).validate('co_abc');
    expect(verdict).toMatchObject({ valid: false, accepted: false, clientOnly: true, reason: 'client_only' });
    expect(h.calls).toHaveLength(0);
  });
});

describe('discovery (GET /v1/standby)', () => {
  const published = (fallback: string[]) => ok({ bypass: [], fallback });

  it('happens on first contact, is kept, and routes offline_ to the published hosts', async () => {
    const h = hosts({
      [MAIN]: [published([FB1, `${FB2}/`, MAIN, 'ftp://x']), ok({ valid: true }), ok(offlineData)],
      [FB1]: [down(), down()],
      [FB2]: [ok(offlineData), fail(500, 'internal_error')],
    });
    const gh = client(h.fetch, { backupServers: undefined });
    await gh.validate('pt_t');
    await gh.validate('offline_t');
    await gh.validate('offline_t');
    expect(h.urls()).toEqual([
      `GET ${MAIN}/v1/standby`,
      `POST ${MAIN}/v1/validate`,
      `POST ${FB1}/api/validate`,
      `POST ${FB2}/api/validate`,
      `POST ${FB1}/api/validate`,
      `POST ${FB2}/api/validate`,
      `POST ${MAIN}/v1/validate`,
    ]);
  });

  it('concurrent first calls share one discovery', async () => {
    const h = hosts({ [MAIN]: [published([]), ok({ valid: true }), ok({ valid: true })] });
    const gh = client(h.fetch, { backupServers: undefined });
    await Promise.all([gh.validate('pt_a'), gh.validate('pt_b')]);
    expect(h.urls().filter((u) => u.startsWith('GET'))).toHaveLength(1);
  });

  it('a failed discovery is no error, and is tried again only after a pause', async () => {
    let now = 1_000_000;
    const h = hosts({ [MAIN]: [down(), published([FB1]), published([FB2])] });
    const dir = new StandbyDirectory({ baseUrl: MAIN, fetch: h.fetch, timeoutMs: 100, now: () => now });
    expect(await dir.lists()).toEqual({ bypass: [], fallback: [] });
    expect(dir.known).toBe(false);
    now += DISCOVERY_RETRY_MS - 1;
    await dir.lists();
    expect(h.calls).toHaveLength(1);
    now += 1;
    expect((await dir.lists()).fallback).toEqual([FB1]);
    // Known: kept until the TTL; during an outage never refreshed first.
    now += DISCOVERY_TTL_MS;
    expect((await dir.lists(true)).fallback).toEqual([FB1]);
    expect((await dir.lists()).fallback).toEqual([FB2]);
    expect(h.calls).toHaveLength(3);
  });

  it('a failed refresh keeps the known hosts; a 404 means none', async () => {
    let now = 0;
    const h = hosts({ [MAIN]: [published([FB1]), fail(500, 'internal_error'), fail(404, 'not_found')] });
    const dir = new StandbyDirectory({ baseUrl: MAIN, fetch: h.fetch, timeoutMs: 100, now: () => now });
    await dir.lists();
    now += DISCOVERY_TTL_MS;
    expect((await dir.lists()).fallback).toEqual([FB1]);
    now += DISCOVERY_RETRY_MS;
    expect((await dir.lists()).fallback).toEqual([]);
    expect(dir.known).toBe(true);
  });

  it('backupServers is checked at construction', () => {
    for (const bad of ['https://x.example', ['ftp://x.example'], ['https://x.example/?a=1'], [1]]) {
      expect(() => new Gatehouse({ ...creds, backupServers: bad } as never)).toThrow(GatehouseConfigError);
    }
    expect(() => new Gatehouse({ ...creds, backupServers: ['ftp://x'] } as never)).toThrow(
      "backupServers holds 'ftp://x', which is not an http:// or https:// URL",
    );
  });
});

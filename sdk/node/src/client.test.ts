import { describe, expect, it } from 'vitest';
import { Gatehouse } from './client.ts';
import {
  GatehouseApiError,
  GatehouseAuthenticationError,
  GatehouseConfigError,
  GatehouseConnectionError,
  GatehouseInvalidRequestError,
  GatehouseRateLimitError,
} from './errors.ts';
import { isAccepted } from './verdict.ts';

type Step = Response | Error | ((init: RequestInit) => Promise<Response>);

/** A fetch that answers from a script and records what it was sent. */
function scripted(...steps: Step[]) {
  const calls: { url: string; init: RequestInit; body: Record<string, string>; headers: Headers }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    const headers = new Headers(init.headers);
    const raw = String(init.body);
    const body: Record<string, string> =
      headers.get('content-type') === 'application/json'
        ? JSON.parse(raw)
        : Object.fromEntries(new URLSearchParams(raw));
    calls.push({ url, init, body, headers });
    const step = steps.shift();
    if (!step) throw new Error('no more scripted answers');
    if (step instanceof Error) throw step;
    if (typeof step === 'function') return step(init);
    return step;
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': 'req-1', ...headers },
  });
const ok = (data: unknown) => json(200, { code: 0, data });
const fail = (status: number, error: string, headers: Record<string, string> = {}) =>
  json(status, { code: -1, error, message: `${error} message`, msg: `${error} message` }, headers);
const networkDown = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });

const passData = {
  valid: true,
  challenge_id: 'ch_abc',
  action: 'login',
  uid: null,
  captcha_args: {
    platform: 'web',
    user_ip: '203.0.113.7',
    referer: 'https://shop.example/login',
    pkg: null,
    solved_at: 1_700_000_000,
    risk_score: 12,
  },
};

/** No standby discovery in these tests (see transport.test.ts and test/vectors.test.ts for the routing). */
const creds = { appKey: 'ak_test', appSecret: 'sk_test', backupServers: [] as string[] };

describe('new Gatehouse(options)', () => {
  it.each([
    [{}, 'Gatehouse: appKey is required'],
    [{ appKey: 'ak_1' }, 'Gatehouse: appSecret is required'],
    [{ appKey: 'sk_1', appSecret: 'ak_1' }, 'appKey and appSecret are swapped'],
    [{ ...creds, appSecret: 'sk_1\n' }, 'appSecret contains whitespace'],
    [{ ...creds, apiKey: 'x' }, 'unknown option apiKey'],
    [{ ...creds, baseUrl: 'gatehouse.example.com' }, 'baseUrl must be an http:// or https:// URL'],
    [{ ...creds, baseUrl: 'ftp://gatehouse.example.com' }, 'baseUrl must be an http:// or https:// URL'],
    [{ ...creds, baseUrl: 'https://api.example.com/?v=1' }, 'must not carry a query string'],
    [{ ...creds, baseUrl: 'https://bypass.example.com' }, 'points at a standby host (bypass.example.com)'],
    [{ ...creds, baseUrl: 'https://fallbackapiv1.example.com' }, 'points at a standby host'],
    [{ ...creds, timeoutMs: 0 }, 'timeoutMs must be a whole number from 1 to 600000; got 0.'],
    [{ ...creds, maxRetries: 1.5 }, 'maxRetries must be a whole number from 0 to 10; got 1.5.'],
    [{ ...creds, fetch: 'fetch' }, 'fetch must be a function'],
  ])('refuses %j with a precise sentence', (options, message) => {
    expect(() => new Gatehouse(options as never)).toThrow(GatehouseConfigError);
    expect(() => new Gatehouse(options as never)).toThrow(message);
  });

  it('defaults to the local API and trims a trailing slash', () => {
    expect(new Gatehouse(creds).baseUrl).toBe('http://127.0.0.1:8080');
    expect(new Gatehouse({ ...creds, baseUrl: 'https://gh.example.com/base/' }).baseUrl).toBe(
      'https://gh.example.com/base',
    );
  });
});

describe('validate', () => {
  it('sends the spec request and returns a typed verdict with the caller rule applied', async () => {
    const { fetch, calls } = scripted(ok({ ...passData, client_ip_check: 'match' }));
    const gh = new Gatehouse({ ...creds, fetch, baseUrl: 'https://gh.example.com' });
    const verdict = await gh.validate('pt_token', { clientIp: '203.0.113.9', expectedAction: 'login' });
    expect(verdict).toEqual({
      valid: true,
      accepted: true,
      action: 'login',
      challengeId: 'ch_abc',
      uid: null,
      captchaArgs: {
        platform: 'web',
        userIp: '203.0.113.7',
        referer: 'https://shop.example/login',
        pkg: null,
        solvedAt: 1_700_000_000,
        riskScore: 12,
      },
      degraded: false,
      expired: false,
      reason: null,
      offline: false,
      clientOnly: false,
      errorCode: null,
      clientIpCheck: 'match',
      requestId: 'req-1',
    });
    const [call] = calls;
    expect(call!.url).toBe('https://gh.example.com/v1/validate');
    expect(call!.init.method).toBe('POST');
    expect(call!.headers.get('x-app-key')).toBe('ak_test');
    expect(call!.headers.get('x-app-secret')).toBe('sk_test');
    expect(call!.headers.get('content-type')).toBe('application/json');
    expect(call!.body).toMatchObject({ pass_token: 'pt_token', client_ip: '203.0.113.9' });
    expect(call!.body.idempotency_key).toMatch(/^idem_[0-9a-f-]{36}$/);
  });

  it('a token minted for another action is valid but not accepted', async () => {
    const { fetch } = scripted(ok({ ...passData, action: 'register' }));
    const verdict = await new Gatehouse({ ...creds, fetch }).validate('pt_x', { expectedAction: 'login' });
    expect(verdict.valid).toBe(true);
    expect(verdict.accepted).toBe(false);
    expect(isAccepted(verdict, 'register')).toBe(true);
    expect(isAccepted(verdict, 'login')).toBe(false);
    expect(isAccepted({ valid: false, action: 'login' }, 'login')).toBe(false);
  });

  it.each(['token_already_used', 'token_expired', 'token_not_found'] as const)(
    '%s is a verdict, not an exception',
    async (code) => {
      const status = { token_already_used: 409, token_expired: 410, token_not_found: 404 }[code];
      const { fetch, calls } = scripted(fail(status, code));
      const verdict = await new Gatehouse({ ...creds, fetch }).validate('pt_x', { expectedAction: 'login' });
      expect(verdict).toMatchObject({ valid: false, accepted: false, errorCode: code, requestId: 'req-1' });
      expect(verdict.expired).toBe(code === 'token_expired');
      expect(calls).toHaveLength(1);
    },
  );

  it('co_ tokens are client-only, never valid, and cost no request', async () => {
    const { fetch, calls } = scripted();
    const verdict = await new Gatehouse({ ...creds, fetch }).validate('co_anything', {
      expectedAction: 'login',
    });
    expect(verdict).toMatchObject({ valid: false, accepted: false, clientOnly: true, reason: 'client_only' });
    expect(calls).toHaveLength(0);
  });

  it.each([[''], [undefined], [42], ['pt_'.padEnd(2000, 'x')]])(
    'a missing or oversized token (%j) is token_not_found without a request',
    async (token) => {
      const { fetch, calls } = scripted();
      const verdict = await new Gatehouse({ ...creds, fetch }).validate(token as string);
      expect(verdict).toMatchObject({ valid: false, errorCode: 'token_not_found' });
      expect(calls).toHaveLength(0);
    },
  );

  it('offline_ tokens are flagged offline; without backup hosts they go to the main API', async () => {
    const { fetch, calls } = scripted(fail(404, 'token_not_found'));
    const verdict = await new Gatehouse({ ...creds, fetch }).validate('offline_x');
    expect(verdict).toMatchObject({ valid: false, offline: true, errorCode: 'token_not_found' });
    expect(calls[0]!.url).toBe('http://127.0.0.1:8080/v1/validate');
  });

  it('dg_ tokens are degraded and never valid, even if an answer claimed otherwise', async () => {
    const { fetch } = scripted(
      ok({ valid: false, degraded: true, reason: 'quota_exhausted', expired: false }),
      ok({ valid: true, degraded: true, reason: 'quota_exhausted', expired: false }),
    );
    const gh = new Gatehouse({ ...creds, fetch });
    for (let i = 0; i < 2; i++) {
      const verdict = await gh.validate('dg_x', { expectedAction: 'login' });
      expect(verdict).toMatchObject({
        valid: false,
        accepted: false,
        degraded: true,
        reason: 'quota_exhausted',
        action: null,
      });
    }
  });

  it('retries a 5xx and a network error with the same idempotency key, then answers', async () => {
    const { fetch, calls } = scripted(fail(500, 'internal_error'), networkDown(), ok(passData));
    const verdict = await new Gatehouse({ ...creds, fetch }).validate('pt_x', { expectedAction: 'login' });
    expect(verdict.accepted).toBe(true);
    expect(calls).toHaveLength(3);
    const keys = new Set(calls.map((c) => c.body.idempotency_key));
    expect(keys.size).toBe(1);
  });

  it('uses the given idempotency key on every attempt', async () => {
    const { fetch, calls } = scripted(networkDown(), ok(passData));
    await new Gatehouse({ ...creds, fetch }).validate('pt_x', { idempotencyKey: 'req-42' });
    expect(calls.map((c) => c.body.idempotency_key)).toEqual(['req-42', 'req-42']);
  });

  it('two logical calls get two different keys', async () => {
    const { fetch, calls } = scripted(ok(passData), fail(409, 'token_already_used'));
    const gh = new Gatehouse({ ...creds, fetch });
    await gh.validate('pt_x');
    await gh.validate('pt_x');
    expect(calls[0]!.body.idempotency_key).not.toBe(calls[1]!.body.idempotency_key);
  });

  it('throws GatehouseConnectionError after maxRetries + 1 network failures', async () => {
    const { fetch, calls } = scripted(networkDown(), networkDown(), networkDown());
    const error = await new Gatehouse({ ...creds, fetch }).validate('pt_x').catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseConnectionError);
    expect(error).toMatchObject({ code: 'network_error', status: null, requestId: null });
    expect(error.message).toBe(
      'Could not reach Gatehouse at http://127.0.0.1:8080/v1/validate (3 attempts): ECONNREFUSED.',
    );
    expect(calls).toHaveLength(3);
  });

  it('gives up after timeoutMs per attempt with code timeout', async () => {
    const hang = (init: RequestInit) =>
      new Promise<Response>((_, reject) => {
        init.signal!.addEventListener('abort', () => reject(init.signal!.reason));
      });
    const { fetch, calls } = scripted(hang, hang);
    const gh = new Gatehouse({ ...creds, fetch, timeoutMs: 50, maxRetries: 1 });
    const error = await gh.validate('pt_x').catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseConnectionError);
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('no answer within 50 ms');
    expect(calls).toHaveLength(2);
  });

  it('5xx after every retry throws GatehouseApiError with status and request id', async () => {
    const { fetch, calls } = scripted(fail(502, 'internal_error'), fail(502, 'internal_error'));
    const error = await new Gatehouse({ ...creds, fetch, maxRetries: 1 }).validate('pt_x').catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseApiError);
    expect(error).toMatchObject({ code: 'internal_error', status: 502, requestId: 'req-1' });
    expect(calls).toHaveLength(2);
  });

  it('Gatehouse out of reach (no answer, 502/503/504): the error says reverify; other errors do not', async () => {
    const refused = async () => {
      throw new TypeError('fetch failed');
    };
    const gone = await new Gatehouse({ ...creds, fetch: refused, maxRetries: 0 })
      .validate('pt_x')
      .catch((e) => e);
    expect(gone).toBeInstanceOf(GatehouseConnectionError);
    expect(gone).toMatchObject({ code: 'network_error', reverify: true });
    for (const status of [502, 503, 504]) {
      const { fetch } = scripted(fail(status, 'service_unavailable'));
      const down = await new Gatehouse({ ...creds, fetch, maxRetries: 0 }).validate('pt_x').catch((e) => e);
      expect(down).toMatchObject({ code: 'service_unavailable', status, reverify: true });
    }
    for (const [status, code] of [
      [500, 'internal_error'],
      [503, 'service_online'],
      [401, 'invalid_app_secret'],
    ] as const) {
      const { fetch } = scripted(fail(status, code));
      const other = await new Gatehouse({ ...creds, fetch, maxRetries: 0 }).validate('pt_x').catch((e) => e);
      expect(other).toMatchObject({ code, reverify: false });
    }
  });

  it('an answer that is not Gatehouse (a proxy page) is retried, then reported', async () => {
    const page = () => new Response('<html>Bad gateway</html>', { status: 502 });
    const { fetch, calls } = scripted(page(), page(), page());
    const error = await new Gatehouse({ ...creds, fetch }).validate('pt_x').catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseApiError);
    expect(error.code).toBe('unexpected_response');
    expect(error.message).toContain('answered HTTP 502 without a Gatehouse envelope');
    expect(calls).toHaveLength(3);
  });

  it.each([
    ['invalid_app_key', 401],
    ['invalid_app_secret', 401],
    ['app_disabled', 403],
  ])('%s throws GatehouseAuthenticationError at once', async (code, status) => {
    const { fetch, calls } = scripted(fail(status, code));
    const error = await new Gatehouse({ ...creds, fetch }).validate('pt_x').catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseAuthenticationError);
    expect(error).toMatchObject({ code, status, requestId: 'req-1', message: `${code} message` });
    expect(calls).toHaveLength(1);
  });

  it('service_online is not retried: the URL is wrong', async () => {
    const { fetch, calls } = scripted(fail(503, 'service_online'));
    const error = await new Gatehouse({ ...creds, fetch }).validate('pt_x').catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseApiError);
    expect(error.code).toBe('service_online');
    expect(error.message).toContain("set baseUrl to the main API's base URL");
    expect(calls).toHaveLength(1);
  });

  it('invalid_request throws and a 429 is not retried by validate', async () => {
    const { fetch, calls } = scripted(
      fail(400, 'invalid_request'),
      fail(429, 'rate_limited', { 'retry-after': '1' }),
    );
    const gh = new Gatehouse({ ...creds, fetch });
    await expect(gh.validate('pt_x', { clientIp: 'nope' })).rejects.toBeInstanceOf(
      GatehouseInvalidRequestError,
    );
    const limited = await gh.validate('pt_x').catch((e) => e);
    expect(limited).toBeInstanceOf(GatehouseRateLimitError);
    expect(limited.retryAfterSeconds).toBe(1);
    expect(calls).toHaveLength(2);
  });

  it('refuses malformed call options before sending anything', async () => {
    const { fetch, calls } = scripted();
    const gh = new Gatehouse({ ...creds, fetch });
    await expect(gh.validate('pt_x', { idempotencyKey: 'has space' })).rejects.toThrow(
      'idempotencyKey must be 1 to 128 characters',
    );
    await expect(gh.validate('pt_x', { expected_action: 'login' } as never)).rejects.toThrow(
      'unknown validate option expected_action',
    );
    await expect(gh.validate('pt_x', { expectedAction: 1 } as never)).rejects.toBeInstanceOf(
      GatehouseConfigError,
    );
    expect(calls).toHaveLength(0);
  });
});

describe('issueServerToken', () => {
  const issued = { server_token: 'sct_abc', expires_in: 120, issued_at: 1_700_000_000 };

  it('posts the spec form and maps the answer', async () => {
    const { fetch, calls } = scripted(ok(issued));
    const token = await new Gatehouse({ ...creds, fetch }).issueServerToken({
      action: 'login',
      ttl: 120,
      maxUses: 3,
      bindIp: '203.0.113.7',
      bindDeviceId: 'dev-1',
      bindFingerprint: 'fp-1',
      bindUid: 'user-9',
    });
    expect(token).toEqual({ serverToken: 'sct_abc', expiresIn: 120, issuedAt: 1_700_000_000 });
    const [call] = calls;
    expect(call!.url).toBe('http://127.0.0.1:8080/v1/server/challenge/issue');
    expect(call!.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(call!.body).toEqual({
      action: 'login',
      ttl: '120',
      max_uses: '3',
      bind_ip: '203.0.113.7',
      bind_device_id: 'dev-1',
      bind_fingerprint: 'fp-1',
      bind_uid: 'user-9',
    });
  });

  it('retries rate_limit_exceeded after Retry-After', async () => {
    const { fetch, calls } = scripted(fail(429, 'rate_limit_exceeded', { 'retry-after': '1' }), ok(issued));
    const started = Date.now();
    const token = await new Gatehouse({ ...creds, fetch }).issueServerToken({ action: 'login' });
    expect(token.serverToken).toBe('sct_abc');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(calls).toHaveLength(2);
  });

  it('does not wait for a Retry-After above the bound, nor past maxRetries', async () => {
    const long = scripted(fail(429, 'rate_limit_exceeded', { 'retry-after': '60' }));
    const error = await new Gatehouse({ ...creds, fetch: long.fetch })
      .issueServerToken({ action: 'login' })
      .catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseRateLimitError);
    expect(error).toMatchObject({ code: 'rate_limit_exceeded', status: 429, retryAfterSeconds: 60 });
    expect(long.calls).toHaveLength(1);

    const short = scripted(
      fail(429, 'rate_limit_exceeded', { 'retry-after': '0' }),
      fail(429, 'rate_limit_exceeded', { 'retry-after': '0' }),
    );
    const again = await new Gatehouse({ ...creds, fetch: short.fetch, maxRetries: 1 })
      .issueServerToken({ action: 'login' })
      .catch((e) => e);
    expect(again).toBeInstanceOf(GatehouseRateLimitError);
    expect(short.calls).toHaveLength(2);
  });

  it('refuses a missing action or mistyped fields before sending', async () => {
    const { fetch, calls } = scripted();
    const gh = new Gatehouse({ ...creds, fetch });
    await expect(gh.issueServerToken({} as never)).rejects.toThrow('issueServerToken needs { action }');
    await expect(gh.issueServerToken({ action: 'login', ttl: '60' } as never)).rejects.toThrow(
      "issueServerToken's ttl must be a whole number",
    );
    await expect(gh.issueServerToken({ action: 'login', max_uses: 1 } as never)).rejects.toThrow(
      'unknown issueServerToken option max_uses',
    );
    expect(calls).toHaveLength(0);
  });
});

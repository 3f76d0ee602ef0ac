import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, type Json, startTestApi, type TestApi } from './harness.ts';
import { OpenApiContract } from './openapi-assert.ts';

/*
 * The OpenAPI document must be no looser than the server (ttl and max_uses 0, an empty client_ip, app keys
 * without ak_, extra body keys, an undocumented 413 are the kind of gap it guards against). Here the served
 * document and the running server judge the same requests: a request the document's schema refuses must be
 * refused by the server with 400 invalid_request, and one the document allows must not be (whatever else it
 * answers: a verdict, 401, 404...). Both judge every case, so neither can drift from the other unnoticed.
 */

const run = await databaseAvailable();

type Case = [label: string, body: unknown];

describe.runIf(run)('OpenAPI document and server agree on what is a valid request', () => {
  let api: TestApi;
  let contract: OpenApiContract;
  let served: Json;
  let headers: Record<string, string>;
  let appKey: string;

  beforeAll(async () => {
    api = await startTestApi();
    served = await (await fetch(`${api.url}/openapi.json`)).json();
    contract = new OpenApiContract(served);
    const app = await api.createApp({ name: 'drift', plan: 'enterprise' });
    appKey = app.appKey;
    headers = {
      'X-App-Key': app.appKey,
      'X-App-Secret': app.appSecret,
      authorization: `Bearer ${api.runtime.adminToken}`,
    };
  });
  afterAll(() => api?.close());

  function documentAllows(path: string, method: string, type: string, body: unknown): boolean {
    const template = contract.template(path)!;
    const schema = served.paths[template][method.toLowerCase()].requestBody.content[type].schema;
    // A form carries every value as text; OpenAPI types its fields as the values they spell.
    const typed =
      type === 'application/json'
        ? body
        : Object.fromEntries(
            Object.entries(body as Record<string, string>).map(([k, v]) => [
              k,
              /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v,
            ]),
          );
    return contract.compile(schema)(typed) as boolean;
  }

  async function serverAllows(path: string, method: string, type: string, body: unknown): Promise<boolean> {
    const encoded =
      type === 'application/json'
        ? JSON.stringify(body)
        : new URLSearchParams(body as Record<string, string>).toString();
    const res = await fetch(api.url + path, {
      method,
      headers: { ...headers, 'content-type': type },
      body: encoded,
    });
    const answer = (await res.json()) as Json;
    expect(res.status, `${method} ${path} ${encoded}`).toBeLessThan(500);
    return !(res.status === 400 && answer.error === 'invalid_request');
  }

  async function expectAgreement(path: string, method: string, cases: Case[], type = 'application/json') {
    const disagreements: string[] = [];
    for (const [label, body] of cases) {
      const doc = documentAllows(path, method, type, body);
      const server = await serverAllows(path, method, type, body);
      if (doc !== server) {
        disagreements.push(
          `${label}: document ${doc ? 'allows' : 'refuses'}, server ${server ? 'allows' : 'refuses'}`,
        );
      }
    }
    expect(disagreements, `${method} ${path} (${type})`).toEqual([]);
  }

  const bounded = (field: string, min: number, max: number, base: object): Case[] => [
    [`${field} ${min}`, { ...base, [field]: min }],
    [`${field} ${max}`, { ...base, [field]: max }],
    [`${field} ${min - 1}`, { ...base, [field]: min - 1 }],
    [`${field} ${max + 1}`, { ...base, [field]: max + 1 }],
    [`${field} 1.5`, { ...base, [field]: 1.5 }],
    [`${field} -1`, { ...base, [field]: -1 }],
    [`${field} null`, { ...base, [field]: null }],
    [`${field} true`, { ...base, [field]: true }],
  ];

  it('POST /v1/server/challenge/issue, JSON: ttl and max_uses bounds, bindings', async () => {
    const base = { action: 'login' };
    await expectAgreement('/v1/server/challenge/issue', 'POST', [
      ['minimal', base],
      ...bounded('ttl', 1, 900, base),
      ...bounded('max_uses', 1, 1000, base),
      ['empty bind_ip', { ...base, bind_ip: '' }],
      ['bind_ip not an address', { ...base, bind_ip: 'localhost' }],
      ['bind_ip IPv4', { ...base, bind_ip: '203.0.113.7' }],
      ['bind_ip IPv6', { ...base, bind_ip: '2001:db8::1' }],
      ['empty binding_ip', { ...base, binding_ip: '' }],
      ['bind_uid with a control character', { ...base, bind_uid: 'a\u0001b' }],
      ['bind_uid', { ...base, bind_uid: 'user-1' }],
      ['empty bind_device_id', { ...base, bind_device_id: '' }],
      ['no action', { ttl: 60 }],
      ['action with a space', { action: 'log in' }],
    ]);
  });

  it('POST /v1/server/challenge/issue, form: the same bounds on decimal strings', async () => {
    await expectAgreement(
      '/v1/server/challenge/issue',
      'POST',
      [
        ['minimal', { action: 'login' }],
        ['ttl 0', { action: 'login', ttl: '0' }],
        ['ttl 900', { action: 'login', ttl: '900' }],
        ['ttl 901', { action: 'login', ttl: '901' }],
        ['max_uses 0', { action: 'login', max_uses: '0' }],
        ['max_uses 1000', { action: 'login', max_uses: '1000' }],
        ['max_uses 1001', { action: 'login', max_uses: '1001' }],
        ['empty bind_ip', { action: 'login', bind_ip: '' }],
      ],
      'application/x-www-form-urlencoded',
    );
  });

  it('POST /v1/validate: client_ip, idempotency_key, unknown fields', async () => {
    const base = { pass_token: 'pt_x.y' };
    await expectAgreement('/v1/validate', 'POST', [
      ['minimal', base],
      ['empty pass_token', { pass_token: '' }],
      ['empty client_ip', { ...base, client_ip: '' }],
      ['client_ip not an address', { ...base, client_ip: 'not-an-ip' }],
      ['client_ip IPv4', { ...base, client_ip: '198.51.100.4' }],
      ['client_ip IPv6', { ...base, client_ip: '2001:db8::2' }],
      ['empty idempotency_key', { ...base, idempotency_key: '' }],
      ['unknown field', { ...base, extra: 1 }],
      ['keep_token not a boolean', { ...base, keep_token: 'yes' }],
    ]);
  });

  it('POST /v1/challenge/init and /submit: app keys are ak_ keys', async () => {
    await expectAgreement('/v1/challenge/init', 'POST', [
      ['an app key', { app_key: appKey, action: 'login' }],
      ['an unknown app key', { app_key: 'ak_unknown', action: 'login' }],
      ['an app key without ak_', { app_key: 'key-without-prefix', action: 'login' }],
      ['an empty app key', { app_key: '', action: 'login' }],
      ['a bad platform', { app_key: appKey, action: 'login', platform: 'Web OS' }],
    ]);
    const submit = { challenge_id: 'ch_x', challenge: 'sealed' };
    await expectAgreement('/v1/challenge/submit', 'POST', [
      ['an app key', { ...submit, app_key: appKey }],
      ['an app key without ak_', { ...submit, app_key: 'key-without-prefix' }],
      ['no challenge', { app_key: appKey, challenge_id: 'ch_x' }],
    ]);
  });

  it('POST /admin/v1/apps and PATCH: unknown keys, dates, names, quotas', async () => {
    const cases: Case[] = [
      ['minimal', { name: 'drift' }],
      ['unknown key', { name: 'drift', colour: 'blue' }],
      ['misspelt setting', { name: 'drift', test_mod: true }],
      ['empty name', { name: '' }],
      ['blank name', { name: ' \t\u00a0' }],
      ['name padded with spaces', { name: '  drift  ' }],
      ['name of 100 characters', { name: 'n'.repeat(100) }],
      ['name of 100 characters and a space', { name: `${'n'.repeat(100)} ` }],
      ['date in range', { name: 'drift', subscription_expires_at: '2099-01-01T00:00:00Z' }],
      ['date in year 0020', { name: 'drift', subscription_expires_at: '0020-02-29T00:00:00Z' }],
      ['date in year 0000', { name: 'drift', subscription_expires_at: '0000-01-01T00:00:00Z' }],
      ['date not a date', { name: 'drift', subscription_expires_at: 'tomorrow' }],
      ['negative quota', { name: 'drift', monthly_quota: -1 }],
      ['ttl below 30', { name: 'drift', pass_token_ttl: 29 }],
      ['empty domain', { name: 'drift', allowed_domains: [''] }],
      ['unknown plan', { name: 'drift', plan: 'gold' }],
      ['risk policy', { name: 'drift', risk_policy: { high: 'reject', image_kinds: ['slide'] } }],
      ['risk policy with a misspelt tier', { name: 'drift', risk_policy: { high: 'rejct' } }],
      ['risk policy without image kinds', { name: 'drift', risk_policy: { image_kinds: [] } }],
      ['risk policy with a bad velocity', { name: 'drift', risk_policy: { velocity: { ip: [1] } } }],
      ['risk policy with an unknown list', { name: 'drift', risk_policy: { reputation: { block: [] } } }],
    ];
    await expectAgreement('/admin/v1/apps', 'POST', cases);
    const key = (await api.createApp({ name: 'patched' })).appKey;
    await expectAgreement(
      `/admin/v1/apps/${key}`,
      'PATCH',
      cases.map(([label, body]) => [label, { ...(body as object), name: 'patched' }]),
    );
    await expectAgreement(`/admin/v1/apps/${key}/rotate-secret`, 'POST', [
      ['grace 0', { grace_seconds: 0 }],
      ['grace -1', { grace_seconds: -1 }],
      ['grace 31 days', { grace_seconds: 31 * 86_400 }],
      ['unknown key', { grace: 1 }],
    ]);
  });

  it('documents the app key pattern of every admin path', async () => {
    for (const [path, item] of Object.entries(served.paths as Record<string, Json>)) {
      if (!path.includes('{appKey}')) continue;
      const schema = item.parameters.find((p: Json) => p.name === 'appKey').schema;
      const validate = contract.compile(schema);
      expect(validate('ak_abc'), path).toBe(true);
      expect(validate('not-a-key'), path).toBe(false);
      const res = await fetch(`${api.url}${path.replace('{appKey}', 'not-a-key')}`, { headers });
      expect([400, 405], path).toContain(res.status);
    }
  });

  it('documents 429 rate_limited with Retry-After on every operation behind admin or app credentials', () => {
    let checked = 0;
    for (const [path, method, op] of contract.operations()) {
      const schemes = ((op.security ?? []) as object[]).flatMap((s) => Object.keys(s));
      if (!schemes.includes('admin') && !schemes.includes('appKey')) continue;
      const limited = (op.responses as Record<string, Json>)['429'];
      expect(limited, `${method} ${path}`).toBeDefined();
      expect(limited.content['application/json'].schema.properties.error.enum).toContain('rate_limited');
      expect(limited.headers['Retry-After'], `${method} ${path}`).toBeDefined();
      checked++;
    }
    expect(checked).toBeGreaterThan(8);
  });

  it('documents 413 and 415 on every operation that takes a body', () => {
    for (const [path, method, op] of contract.operations()) {
      if (!op.requestBody) continue;
      const responses = op.responses as Record<string, Json>;
      for (const status of ['400', '413', '415']) {
        expect(responses[status], `${method} ${path} ${status}`).toBeDefined();
      }
    }
  });
});

import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Gatehouse, GatehouseError, type GatehouseRateLimitError, type Verdict } from '../src/index.ts';

/**
 * The shared vectors (sdk/test-vectors/, read its README) that the Go and PHP SDKs run too: each case
 * scripts three real HTTP hosts (main, fallback1, fallback2), makes one call, and checks the requests the
 * SDK made, in order, and the verdict or error it returned.
 */

const DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../test-vectors');
// biome-ignore lint/suspicious/noExplicitAny: vectors are JSON read field by field.
type Json = any;
const validate: Json = JSON.parse(readFileSync(join(DIR, 'validate.json'), 'utf8'));
const issue: Json = JSON.parse(readFileSync(join(DIR, 'issue.json'), 'utf8'));
const HOSTS = ['main', 'fallback1', 'fallback2'] as const;

interface Recorded {
  host: string;
  observed: boolean;
  method?: string;
  path?: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: string;
  at: number;
}

/** The three fake hosts of one case. */
async function startHosts(answers: Record<string, Json>) {
  const records: Recorded[] = [];
  const urls: Record<string, string> = {};
  const servers: (Server | NetServer)[] = [];
  const sockets = new Set<Socket>();
  const unexpected: string[] = [];
  for (const host of HOSTS) {
    const script = answers[host];
    if (script === 'unreachable') {
      // Accepts and resets every connection at once, unread: a crashed or refusing host.
      const server = createNetServer((socket) => {
        records.push({ host, observed: false, at: Date.now() });
        socket.resetAndDestroy();
      });
      servers.push(server);
      urls[host] = await listen(server);
      continue;
    }
    const queue: Json[] = [...(script ?? [])];
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        records.push({
          host,
          observed: true,
          method: req.method!,
          path: req.url!,
          headers: req.headers,
          body,
          at: Date.now(),
        });
        const answer = queue.shift();
        if (answer === undefined) {
          unexpected.push(`${host}: ${req.method} ${req.url} ${body}`);
          res.writeHead(599).end();
        } else if (answer === 'drop') {
          req.socket.destroy();
        } else if (answer === 'timeout') {
          // Never answers; the connection is closed when the case ends.
        } else {
          let out = answer.raw ?? JSON.stringify(answer.body);
          for (const name of HOSTS) out = out.replaceAll(`{${name}}`, urls[name]!);
          res.writeHead(answer.status, {
            ...(answer.raw === undefined ? { 'Content-Type': 'application/json' } : {}),
            ...answer.headers,
          });
          res.end(out);
        }
      });
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    servers.push(server);
    urls[host] = await listen(server);
  }
  return {
    urls,
    records,
    unexpected,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    },
  };
}

async function listen(server: Server | NetServer): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

function client(base: Json, overrides: Json, urls: Record<string, string>) {
  const c = { ...base, ...overrides };
  return new Gatehouse({
    appKey: c.app_key,
    appSecret: c.app_secret,
    baseUrl: urls.main,
    timeoutMs: c.timeout_ms,
    maxRetries: c.max_retries,
    ...(c.backup_servers === 'discover'
      ? {}
      : { backupServers: c.backup_servers.map((h: string) => urls[h]) }),
  });
}

/** A verdict as the vectors spell it: snake_case. */
function snake(v: Verdict) {
  const a = v.captchaArgs;
  return {
    valid: v.valid,
    accepted: v.accepted,
    action: v.action,
    challenge_id: v.challengeId,
    uid: v.uid,
    captcha_args: a && {
      platform: a.platform,
      user_ip: a.userIp,
      referer: a.referer,
      pkg: a.pkg,
      solved_at: a.solvedAt,
      risk_score: a.riskScore,
    },
    degraded: v.degraded,
    expired: v.expired,
    reason: v.reason,
    offline: v.offline,
    client_only: v.clientOnly,
    error_code: v.errorCode,
    client_ip_check: v.clientIpCheck,
    request_id: v.requestId,
  };
}

function checkError(error: unknown, expected: Json) {
  expect(error).toBeInstanceOf(GatehouseError);
  const e = error as GatehouseError;
  expect({ code: e.code, status: e.status, request_id: e.requestId }).toEqual({
    code: expected.code,
    status: expected.status,
    request_id: expected.request_id,
  });
  if ('retry_after_seconds' in expected) {
    expect((e as GatehouseRateLimitError).retryAfterSeconds).toBe(expected.retry_after_seconds);
  }
}

/** The recorded requests against the case's list: host, method, path, then the body checks. */
function checkRequests(records: Recorded[], expected: Json[], kind: 'validate' | 'issue') {
  const unread = new Set(records.filter((r) => !r.observed).map((r) => r.host));
  const line = (host: string, method: string, path: string) =>
    unread.has(host) ? `${host} (unread)` : `${host} ${method} ${path}`;
  expect(records.map((r) => line(r.host, r.method ?? '', r.path ?? ''))).toEqual(
    expected.map((r) => line(r.host, r.method, r.path)),
  );
  const keys = new Set<string>();
  expected.forEach((want, i) => {
    const got = records[i]!;
    if (!got.observed) return;
    if (got.method === 'POST') {
      expect(got.headers!['x-app-key']).toBe('ak_vectors');
      expect(got.headers!['x-app-secret']).toBe('sk_vectors');
      expect(got.headers!['content-type']).toBe(
        kind === 'validate' ? 'application/json' : 'application/x-www-form-urlencoded',
      );
    }
    if (kind === 'validate' && got.method === 'POST') {
      const { idempotency_key: key, ...body } = JSON.parse(got.body!);
      expect(body).toEqual(want.body);
      if (want.idempotency_key === true) expect(typeof key).toBe('string');
      else if (want.idempotency_key === false) expect(key).toBeUndefined();
      else expect(key).toBe(want.idempotency_key);
      if (key) keys.add(key);
    }
    if (kind === 'validate' && got.method === 'GET') expect(got.body).toBe('');
    if (kind === 'issue') {
      expect(Object.fromEntries(new URLSearchParams(got.body))).toEqual(want.form);
      if (want.min_delay_ms)
        expect(got.at - records[i - 1]!.at).toBeGreaterThanOrEqual(want.min_delay_ms - 5);
    }
  });
  // One logical call, one idempotency key, on every host.
  expect(keys.size).toBeLessThanOrEqual(1);
}

let hosts: Awaited<ReturnType<typeof startHosts>> | undefined;
afterEach(async () => {
  await hosts?.close();
  hosts = undefined;
});

describe('shared vectors: validate.json', () => {
  it('has cases', () => expect(validate.cases.length).toBeGreaterThan(40));
  for (const c of validate.cases as Json[]) {
    it(c.name, async () => {
      hosts = await startHosts(c.answers ?? {});
      const gh = client(validate.client, c.client ?? {}, hosts.urls);
      const o = c.options ?? {};
      const call = gh.validate(c.token, {
        ...(o.client_ip !== undefined ? { clientIp: o.client_ip } : {}),
        ...(o.expected_action !== undefined ? { expectedAction: o.expected_action } : {}),
        ...(o.idempotency_key !== undefined ? { idempotencyKey: o.idempotency_key } : {}),
      });
      if (c.error) checkError(await call.catch((e) => e), c.error);
      else expect(snake(await call)).toEqual(c.verdict);
      checkRequests(hosts.records, c.requests ?? [], 'validate');
      expect(hosts.unexpected).toEqual([]);
    });
  }
});

describe('shared vectors: issue.json', () => {
  const FIELDS: Record<string, string> = {
    action: 'action',
    ttl: 'ttl',
    max_uses: 'maxUses',
    bind_ip: 'bindIp',
    bind_device_id: 'bindDeviceId',
    bind_fingerprint: 'bindFingerprint',
    bind_uid: 'bindUid',
  };
  for (const c of issue.cases as Json[]) {
    it(c.name, async () => {
      hosts = await startHosts(c.answers ?? {});
      const gh = client(issue.client, c.client ?? {}, hosts.urls);
      const params = Object.fromEntries(
        Object.entries(c.params as Record<string, unknown>).map(([k, v]) => [FIELDS[k] ?? k, v]),
      );
      const call = gh.issueServerToken(params as never);
      if (c.error) checkError(await call.catch((e) => e), c.error);
      else {
        const t = await call;
        expect({ server_token: t.serverToken, expires_in: t.expiresIn, issued_at: t.issuedAt }).toEqual(
          c.result,
        );
      }
      checkRequests(hosts.records, c.requests ?? [], 'issue');
      expect(hosts.unexpected).toEqual([]);
    });
  }
});

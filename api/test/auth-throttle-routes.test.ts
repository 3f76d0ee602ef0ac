import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, routerOf } from '../src/app.ts';
import type { AuthThrottle } from '../src/auth-throttle.ts';
import { databaseAvailable, startTestApi, TEST_DATABASE, type TestApi } from './harness.ts';

/*
 * The authentication throttle (auth-throttle.ts) lets a request with no credential (no admin or internal
 * path, no siteverify secret, no X-App-Key) pass without an async frame, counting nothing after it: that is right
 * only while no route can answer a token failure (`token_not_found`, thrown or as a validate verdict) to
 * such a request. This goes over every route the API has, sends each a forged token in every field a
 * route reads one from, without X-App-Key, and lists the routes that answered a token failure: none. And
 * with X-App-Key, validate's verdict on a forged token is still counted.
 */
const run = await databaseAvailable();

const FORGED = 'pt_forgedforgedforgedforgedforged.forged';

describe.runIf(run)(`routes that can answer a token failure (${TEST_DATABASE})`, () => {
  let api: TestApi;
  let calls: string[];
  beforeAll(async () => {
    api = await startTestApi();
    const throttle = api.runtime.authThrottle as AuthThrottle;
    calls = [];
    const fail = throttle.fail.bind(throttle);
    const check = throttle.check.bind(throttle);
    throttle.fail = (kind, source, key) => {
      calls.push(`fail ${kind} ${key}`);
      return fail(kind, source, key);
    };
    throttle.check = (kind, source, key) => {
      calls.push(`check ${kind} ${key}`);
      return check(kind, source, key);
    };
  });
  afterAll(() => api?.close());

  it('no route answers a token failure to a request without a credential, and the throttle is never asked', async () => {
    const { appKey } = await api.createApp({ test_mode: true });
    const router = routerOf(createApp(api.runtime))!;
    const routes = router.stack.flatMap((layer) =>
      layer.methods
        .filter((m) => !['HEAD', 'CONNECT', 'TRACE', 'TRACK'].includes(m))
        .map((method) => ({ method, path: layer.path })),
    );
    expect(routes.length).toBeGreaterThan(30);
    expect(routes).toContainEqual({ method: 'POST', path: '/v1/validate' });
    const body = JSON.stringify({
      app_key: appKey,
      pass_token: FORGED,
      token: FORGED,
      response: FORGED,
      secret: 'not-the-secret',
      action: 'login',
    });
    const tokenFailures: string[] = [];
    const unguarded: string[] = [];
    for (const { method, path } of routes) {
      if (typeof path !== 'string') continue;
      const url = api.url + path.replace(/:(\w+)\+?\??/g, 'x').replace(/\(.*?\)/g, '');
      // The admin paths and /internal/* (the standby sync credential, an admin-class secret) are
      // guarded whatever they carry, as are the siteverify endpoints.
      const guarded =
        path.startsWith('/admin/') ||
        path.startsWith('/internal/') ||
        (method === 'POST' && path.endsWith('/siteverify'));
      if (guarded) continue;
      unguarded.push(`${method} ${path}`);
      const res = await fetch(url, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(method === 'GET' || method === 'OPTIONS' ? {} : { body }),
      });
      const text = await res.text();
      let answer: { error?: unknown; data?: { error?: unknown } } | null = null;
      try {
        answer = JSON.parse(text);
      } catch {}
      // What the throttle reads: a thrown error's envelope, or a verdict's data.error.
      if (answer?.error === 'token_not_found' || answer?.data?.error === 'token_not_found') {
        tokenFailures.push(`${method} ${path}: ${res.status}`);
      }
    }
    expect(unguarded).toContain('POST /v1/challenge/init');
    expect(unguarded).toContain('POST /v1/validate');
    expect(tokenFailures).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('with X-App-Key, a forged token at validate is still a token failure the throttle counts', async () => {
    const { appKey, appSecret } = await api.createApp();
    calls.length = 0;
    const res = await api.post(
      '/v1/validate',
      { pass_token: FORGED },
      { 'X-App-Key': appKey, 'X-App-Secret': appSecret },
    );
    expect(JSON.stringify(res.body)).toContain('token_not_found');
    expect(calls).toEqual([`check app ${appKey}`, `fail token ${appKey}`, `check token ${appKey}`]);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, exactRoutes, routerOf } from '../src/app.ts';
import { databaseAvailable, postJson, startTestApi, TEST_DATABASE, type TestApi } from './harness.ts';

/*
 * POST /v1/challenge/init and POST /v1/validate are run without the router's per-request matching (app.ts, exactRoute, issue 14):
 * the router is not asked, and the request is answered, labelled and observed as the router would have.
 */
const run = await databaseAvailable();

describe.runIf(run)(`the challenge init route without the router's matching (${TEST_DATABASE})`, () => {
  let api: TestApi;
  let server: Server;
  let url: string;
  let matches: string[];
  let seen: Record<string, unknown> | undefined;
  beforeAll(async () => {
    api = await startTestApi();
    const app = createApp(api.runtime);
    const router = routerOf(app)!;
    matches = [];
    const match = router.match.bind(router);
    router.match = (path, method) => {
      matches.push(`${method} ${path}`);
      return match(path, method);
    };
    // What the route's handlers see of the routing, read where the answer is sent.
    app.middleware.unshift(async (ctx, next) => {
      await next();
      const c = ctx as unknown as Record<string, unknown>;
      seen = {
        matchedRoute: c._matchedRoute,
        params: c.params,
        requestParams: (ctx.request as unknown as Record<string, unknown>).params,
        captures: c.captures,
        routerPath: c.routerPath,
        router: c.router === router,
        matched: (c.matched as { path: string }[] | undefined)?.map((l) => l.path),
      };
    });
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await api?.close();
  });

  it('answers an init without asking the router, with what the router would have set', async () => {
    const { appKey } = await api.createApp({ test_mode: true });
    matches.length = 0;
    const res = await postJson(`${url}/v1/challenge/init`, { app_key: appKey, action: 'login' });
    expect(res.status).toBe(200);
    expect(res.body.data.mode).toBe('challenge');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(matches).toEqual([]);
    expect(seen).toEqual({
      matchedRoute: '/v1/challenge/init',
      params: {},
      requestParams: {},
      captures: [],
      routerPath: '/v1/challenge/init',
      router: true,
      matched: ['/v1/challenge/init'],
    });
    // A refused init is the same error envelope.
    const refused = await postJson(`${url}/v1/challenge/init`, { app_key: 'ak_unknown', action: 'login' });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: -1, error: 'invalid_app_key' });
    expect(matches).toEqual([]);
  });

  it('answers a validation without asking the router: a verdict, a refused key, the same routing fields', async () => {
    const { appKey, appSecret } = await api.createApp({ test_mode: true });
    const credentials = { 'X-App-Key': appKey, 'X-App-Secret': appSecret };
    matches.length = 0;
    const forged = 'pt_forgedforgedforgedforgedforged.forged';
    const res = await postJson(`${url}/v1/validate`, { pass_token: forged }, credentials);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ valid: false, error: 'token_not_found' });
    expect(matches).toEqual([]);
    expect(seen).toEqual({
      matchedRoute: '/v1/validate',
      params: {},
      requestParams: {},
      captures: [],
      routerPath: '/v1/validate',
      router: true,
      matched: ['/v1/validate'],
    });
    // Its authentication runs in the lane: a wrong secret, an unknown key.
    const wrong = await postJson(
      `${url}/v1/validate`,
      { pass_token: forged },
      { ...credentials, 'X-App-Secret': 'sk_no' },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: 'invalid_app_secret' });
    const unknown = await postJson(
      `${url}/v1/validate`,
      { pass_token: forged },
      { 'X-App-Key': 'ak_unknown' },
    );
    expect(unknown.body).toMatchObject({ error: 'invalid_app_key' });
    expect(matches).toEqual([]);
  });

  it('createApp refuses an exact route that is not one parameterless layer', () => {
    const router = routerOf(createApp(api.runtime))!;
    expect(() => exactRoutes(router, [['POST', '/v1/challenge/init']])).not.toThrow();
    expect(() => exactRoutes(router, [['GET', '/v1/challenge/init']])).toThrow(/not a single route/);
    expect(() => exactRoutes(router, [['GET', '/admin/v1/apps/:appKey']])).toThrow(/not a single route/);
  });

  it('every other route is still the router’s: submit, a trailing slash, another method', async () => {
    matches.length = 0;
    await postJson(`${url}/v1/challenge/submit`, {});
    const slash = await postJson(`${url}/v1/challenge/init/`, { app_key: 'ak_unknown', action: 'login' });
    const get = await fetch(`${url}/v1/challenge/init`);
    expect(matches).toEqual([
      'POST /v1/challenge/submit',
      'POST /v1/challenge/init/',
      'GET /v1/challenge/init',
    ]);
    expect(slash.body).toMatchObject({ error: 'invalid_app_key' });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toContain('POST');
  });
});

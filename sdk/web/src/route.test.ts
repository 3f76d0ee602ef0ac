import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { forgetRoutes, Route } from './route.ts';
import { forgetStandbyHosts, standbyHosts } from './standby-hosts.ts';
import { GatehouseError } from './transport.ts';

const MAIN = 'https://api.example';
const B1 = 'https://bypass1.example';
const B2 = 'https://bypass2.example';
const CHALLENGE = { mode: 'challenge', challenge_id: 'ch_1', challenge: 's', tier: 'invisible' };

type Host = 'up' | 'down' | 'online' | 'error500' | { status: number; body: unknown };
let hosts: Record<string, Host>;
let calls: string[];

/** A fetch that answers each host as `hosts` says: up, refusing connections, service_online... */
function fakeFetch(input: RequestInfo | URL): Promise<Response> {
  const url = String(input);
  calls.push(url);
  const host = hosts[new URL(url).origin] ?? 'down';
  const json = (status: number, body: unknown) =>
    Promise.resolve(new Response(JSON.stringify(body), { status }));
  if (host === 'down') return Promise.reject(new TypeError('Failed to fetch'));
  if (host === 'online')
    return json(503, { code: -1, error: 'service_online', message: 'The main API is online.' });
  if (host === 'error500') return Promise.resolve(new Response('<html>bad gateway</html>', { status: 502 }));
  if (typeof host === 'object') return json(host.status, host.body);
  if (url.endsWith('/v1/standby')) return json(200, { code: 0, data: { bypass: [B1, B2], fallback: [] } });
  return json(200, {
    code: 0,
    data: { ...CHALLENGE, ...(new URL(url).origin === MAIN ? {} : { offline: true }) },
  });
}

const signal = () => new AbortController().signal;
const inits = () => calls.filter((c) => c.endsWith('/v1/challenge/init')).map((c) => new URL(c).origin);

beforeEach(() => {
  calls = [];
  hosts = { [MAIN]: 'up', [B1]: 'up', [B2]: 'up' };
  vi.stubGlobal('fetch', vi.fn(fakeFetch));
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  forgetRoutes();
  forgetStandbyHosts();
});

describe('Route: the widget switches hosts by the failover rules', () => {
  it('main up: the challenge comes from the main API; the standby list is discovered in the background', async () => {
    const route = new Route({ apiServer: `${MAIN}/`, loaderOrigin: MAIN });
    const got = await route.init({ app_key: 'ak' }, signal());
    expect(got).toMatchObject({ base: MAIN, standby: false, data: CHALLENGE });
    expect(calls).toContain(`${MAIN}/v1/standby`);
    await vi.waitFor(() => expect(standbyHosts(MAIN, undefined).hosts).toEqual([B1, B2]));
    // Then the main API goes away: the discovered hosts take over.
    hosts[MAIN] = 'down';
    expect(await route.init({}, signal())).toMatchObject({ base: B1, standby: true });
  });

  it('main unreachable: tries both bypass hosts; the one that answered is tried first next time', async () => {
    hosts = { [B2]: 'up' };
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1, B2] });
    expect(await route.init({}, signal())).toMatchObject({ base: B2, standby: true });
    expect(inits()).toEqual([MAIN, B1, B2]);
    calls = [];
    await route.init({}, signal());
    expect(inits()).toEqual([MAIN, B2]);
  });

  it('a 5xx (not service_online) from the main API fails over too', async () => {
    hosts[MAIN] = 'error500';
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1] });
    expect(await route.init({}, signal())).toMatchObject({ base: B1 });
  });

  it('a 4xx from the main API is reported and never fails over', async () => {
    hosts[MAIN] = { status: 401, body: { code: -1, error: 'invalid_app_key', message: 'Invalid App Key' } };
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1, B2] });
    await expect(route.init({}, signal())).rejects.toMatchObject({ code: 'invalid_app_key', status: 401 });
    expect(inits()).toEqual([MAIN]);
  });

  it('main and both bypass hosts unreachable: client-only, said once on the console', async () => {
    hosts = {};
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1, B2] });
    expect(await route.init({}, signal())).toEqual({ clientOnly: true });
    expect(await route.init({}, signal())).toEqual({ clientOnly: true });
    expect(console.warn).toHaveBeenCalledTimes(1);
    expect(String(vi.mocked(console.warn).mock.calls[0]?.[0])).toMatch(/co_/);
  });

  it('main back: the next verification uses it again (main is always tried first)', async () => {
    hosts[MAIN] = 'down';
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1] });
    expect(await route.init({}, signal())).toMatchObject({ base: B1 });
    hosts[MAIN] = 'up';
    expect(await route.init({}, signal())).toMatchObject({ base: MAIN, standby: false });
  });

  it('service_online from a bypass host sends the widget back to the main API at once', async () => {
    let mainCalls = 0;
    vi.stubGlobal(
      'fetch',
      vi.fn((input: RequestInfo | URL) => {
        // A main API that drops one request, then answers; the standby knows it is up.
        if (new URL(String(input)).origin === MAIN && mainCalls++ === 0) {
          calls.push(String(input));
          return Promise.reject(new TypeError('Failed to fetch'));
        }
        return fakeFetch(input);
      }),
    );
    hosts[B1] = 'online';
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1, B2] });
    expect(await route.init({}, signal())).toMatchObject({ base: MAIN });
    expect(inits()).toEqual([MAIN, B1, MAIN]);
  });

  it('apiServer set to a standby host: a console error names the cause, and the correct base is used', async () => {
    hosts[B1] = 'online';
    const route = new Route({ apiServer: B1, loaderOrigin: MAIN });
    expect(await route.init({}, signal())).toMatchObject({ base: MAIN, standby: false });
    const said = String(vi.mocked(console.error).mock.calls[0]?.[0]);
    expect(said).toContain('options.apiServer');
    expect(said).toContain(`Retrying with ${MAIN}`);
    calls = [];
    await route.init({}, signal());
    expect(inits()).toEqual([MAIN]);
  });

  it('apiServer set to a standby host and no other base known: a service_online error naming the option', async () => {
    hosts[B1] = 'online';
    const route = new Route({ apiServer: B1, loaderOrigin: B1 });
    const error = await route.init({}, signal()).catch((e) => e);
    expect(error).toBeInstanceOf(GatehouseError);
    expect(error).toMatchObject({ code: 'service_online', status: 503 });
    expect(error.message).toContain('options.apiServer');
    expect(console.error).toHaveBeenCalled();
  });

  it('a standby host answering as the main API (during an outage) is flagged on the console', async () => {
    const route = new Route({ apiServer: B1, loaderOrigin: B1 });
    await route.init({}, signal());
    expect(String(vi.mocked(console.warn).mock.calls[0]?.[0])).toMatch(/standby host.*options\.apiServer/);
  });

  it('submission goes to the host of the challenge; a failed main API gets a short probe next time', async () => {
    const route = new Route({ apiServer: MAIN, loaderOrigin: MAIN, bypassServers: [B1] });
    const { base } = (await route.init({}, signal())) as { base: string };
    hosts[MAIN] = 'down';
    await expect(route.submit(base, {}, signal())).rejects.toMatchObject({ code: 'network_error' });
    expect(calls.at(-1)).toBe(`${MAIN}/v1/challenge/submit`);
    const timeouts: number[] = [];
    const real = globalThis.setTimeout;
    vi.stubGlobal('setTimeout', (fn: () => void, ms: number) => {
      timeouts.push(ms);
      return real(fn, ms);
    });
    expect(await route.init({}, signal())).toMatchObject({ base: B1 });
    expect(timeouts[0]).toBe(2500);
  });
});

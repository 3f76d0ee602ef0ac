import { type Puzzle, solvePuzzle } from '@gatehouse/core/pow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDatacenterRanges } from '../src/risk/ranges.ts';
import {
  DESKTOP_CHROME as CHROME,
  databaseAvailable,
  DESKTOP_SIGNALS as signals,
  startTestApi,
  type TestApi,
} from './harness.ts';
import { expectMatchesOpenApi } from './openapi-assert.ts';

/*
 * Datacenter addresses through real HTTP: a Chrome-like request from a hosting/datacenter address scores at
 * least the default invisible threshold (35) with no configuration at all, and /v1/validate tells the
 * integrator the score and the reasons of the token's challenge.
 */
const run = await databaseAvailable();

/** Addresses in the committed ranges (AWS us-east-1, a DigitalOcean droplet, Hetzner, AWS over IPv6). */
const HOSTED = ['3.5.140.2', '167.99.241.66', '85.10.199.76', '2600:1f18::1'];
/** Documentation addresses: in no provider's ranges. */
const HOME = '198.51.100.23';

describe.runIf(run)('risk: hosting/datacenter ranges out of the box, reasons for the integrator', () => {
  let api: TestApi;
  let noRanges: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ TRUSTED_PROXIES: 'loopback' });
    noRanges = await startTestApi({ TRUSTED_PROXIES: 'loopback', RISK_DATACENTER_RANGES: 'off' });
  });
  afterAll(async () => {
    await api?.close();
    await noRanges?.close();
  });

  const init = (target: TestApi, appKey: string, ip: string) =>
    target.post(
      '/v1/challenge/init',
      { app_key: appKey, action: 'login', signals },
      { ...CHROME, 'X-Forwarded-For': ip },
    );

  it('the committed ranges name the providers of well-known hosting addresses, and no documentation address', () => {
    const ranges = loadDatacenterRanges();
    expect(ranges.table.size).toBeGreaterThan(1000);
    expect(HOSTED.map((ip) => ranges.provider(ip))).toEqual([
      'Amazon Web Services',
      'DigitalOcean',
      'Hetzner',
      'Amazon Web Services',
    ]);
    expect(ranges.provider(HOME)).toBeUndefined();
    expect(ranges.provider('192.168.1.10')).toBeUndefined();
    expect(ranges.about.join(' ')).toMatch(/CC BY 4\.0/);
  });

  it('a Chrome-like request from a datacenter scores 35 or more with the default policy: no invisible tier', async () => {
    const created = await api.createApp({ name: 'dc' });
    for (const ip of HOSTED) {
      const res = await init(api, created.appKey, ip);
      expect(res.status, ip).toBe(200);
      expect(res.body.data.tier, ip).not.toBe('invisible');
    }
    const home = await init(api, created.appKey, HOME);
    expect(home.body.data.tier).toBe('invisible');
    // With the built-in ranges turned off, the same datacenter request is an ordinary one again.
    const other = await noRanges.createApp({ name: 'dc-off' });
    expect((await init(noRanges, other.appKey, HOSTED[0] as string)).body.data.tier).toBe('invisible');
  });

  it('/v1/validate answers risk: {score, reasons} of the challenge the token came from', async () => {
    // Every score gets the invisible tier here, so the token can be earned by a proof-of-work alone.
    const created = await api.createApp({
      name: 'dc-validate',
      risk_policy: { invisible_below: 101, image_below: 101 },
    });
    const auth = { 'X-App-Key': created.appKey, 'X-App-Secret': created.appSecret };
    const tokenFrom = async (ip: string) => {
      const started = await init(api, created.appKey, ip);
      expect(started.body.data.tier).toBe('invisible');
      const solved = await api.post('/v1/challenge/submit', {
        app_key: created.appKey,
        challenge_id: started.body.data.challenge_id,
        challenge: started.body.data.challenge,
        pow: await solvePuzzle(started.body.data.pow as Puzzle),
      });
      expect(solved.status).toBe(200);
      return solved.body.data.pass_token as string;
    };

    const hosted = await api.post('/v1/validate', { pass_token: await tokenFrom(HOSTED[0] as string) }, auth);
    expectMatchesOpenApi('/v1/validate', 'post', hosted);
    expect(hosted.body.data.valid).toBe(true);
    expect(hosted.body.data.risk).toEqual({ score: 35, reasons: ['network.datacenter:+25'] });
    expect(hosted.body.data.captcha_args).toMatchObject({
      risk_score: 35,
      risk_reasons: ['network.datacenter:+25'],
    });

    const home = await api.post('/v1/validate', { pass_token: await tokenFrom(HOME) }, auth);
    expectMatchesOpenApi('/v1/validate', 'post', home);
    expect(home.body.data.risk).toEqual({ score: 10, reasons: [] });
  }, 60_000);
});

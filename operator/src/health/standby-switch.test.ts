import { describe, expect, it } from 'vitest';
import { makeApp } from '../../test/fixtures.ts';
import { StandbySwitch } from './standby-switch.ts';

describe('StandbySwitch', () => {
  const targets = async () => ['http://10.0.0.1:9091', 'http://10.0.0.2:9092'];

  it('without the sync credential makes no call and reports every process as not switched, naming the setting', async () => {
    let calls = 0;
    const standby = new StandbySwitch({
      token: undefined,
      targets,
      fetch: (async () => {
        calls++;
        return new Response(null, { status: 204 });
      }) as typeof fetch,
    });
    const result = await standby.setMode(makeApp(), 'eu', 'serve');
    expect(calls).toBe(0);
    expect(result).toMatchObject({ total: 2, acknowledged: 0 });
    expect(result.errors.join()).toContain('GATEHOUSE_STANDBY_SYNC_TOKEN');
  });

  it('with it, posts the mode to every process with the token and counts the acknowledgements', async () => {
    const seen: { url: string; auth: string | null; body: string }[] = [];
    const standby = new StandbySwitch({
      token: 'st_sync-credential-of-the-standbys',
      targets,
      fetch: (async (url: string, init: RequestInit) => {
        seen.push({ url, auth: new Headers(init.headers).get('authorization'), body: String(init.body) });
        return new Response(null, { status: url.includes('10.0.0.2') ? 401 : 204 });
      }) as unknown as typeof fetch,
    });
    const result = await standby.setMode(makeApp(), 'eu', 'serve');
    expect(seen.map((s) => s.url).sort()).toEqual([
      'http://10.0.0.1:9091/internal/v1/mode',
      'http://10.0.0.2:9092/internal/v1/mode',
    ]);
    for (const s of seen) {
      expect(s.auth).toBe('Bearer st_sync-credential-of-the-standbys');
      expect(JSON.parse(s.body)).toEqual({ mode: 'serve' });
    }
    expect(result).toMatchObject({ total: 2, acknowledged: 1, errors: ['http://10.0.0.2:9092: HTTP 401'] });
  });
});

import { describe, expect, it, vi } from 'vitest';
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

  it('re-tells only processes that have not acknowledged the same mode within fresherThanMs', async () => {
    vi.useFakeTimers();
    try {
      let urls = ['http://10.0.0.1:9091', 'http://10.0.0.2:9092'];
      const calls: string[] = [];
      const standby = new StandbySwitch({
        token: 'st_sync',
        targets: async () => urls,
        fetch: (async (url: string, init: RequestInit) => {
          calls.push(`${url} ${JSON.parse(String(init.body)).mode}`);
          return new Response(null, { status: 204 });
        }) as unknown as typeof fetch,
      });
      const app = makeApp();
      expect(await standby.setMode(app, 'eu', 'serve', { fresherThanMs: 1000 })).toMatchObject({
        total: 2,
        acknowledged: 2,
        sent: 2,
      });
      // A reconcile soon after: nobody is called again, and both still count as acknowledged.
      await vi.advanceTimersByTimeAsync(500);
      expect(await standby.setMode(app, 'eu', 'serve', { fresherThanMs: 1000 })).toMatchObject({
        acknowledged: 2,
        sent: 0,
      });
      // A new pod is told at once; the others are not.
      urls = [...urls, 'http://10.0.0.3:9093'];
      expect(await standby.setMode(app, 'eu', 'serve', { fresherThanMs: 1000 })).toMatchObject({
        total: 3,
        acknowledged: 3,
        sent: 1,
      });
      // Once the acknowledgement is older than fresherThanMs, or without it, or for another mode: everyone.
      await vi.advanceTimersByTimeAsync(600);
      expect((await standby.setMode(app, 'eu', 'serve', { fresherThanMs: 1000 })).sent).toBe(2);
      expect((await standby.setMode(app, 'eu', 'serve')).sent).toBe(3);
      expect((await standby.setMode(app, 'eu', 'auto', { fresherThanMs: 1000 })).sent).toBe(3);
      expect(calls.filter((c) => c.startsWith('http://10.0.0.1'))).toEqual([
        'http://10.0.0.1:9091/internal/v1/mode serve',
        'http://10.0.0.1:9091/internal/v1/mode serve',
        'http://10.0.0.1:9091/internal/v1/mode serve',
        'http://10.0.0.1:9091/internal/v1/mode auto',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a process that failed to acknowledge is called again on the next try', async () => {
    let fail = true;
    let calls = 0;
    const standby = new StandbySwitch({
      token: 'st_sync',
      targets: async () => ['http://10.0.0.1:9091'],
      fetch: (async () => {
        calls++;
        return new Response(null, { status: fail ? 503 : 204 });
      }) as unknown as typeof fetch,
    });
    expect(await standby.setMode(makeApp(), 'eu', 'serve', { fresherThanMs: 60_000 })).toMatchObject({
      acknowledged: 0,
      sent: 1,
    });
    fail = false;
    expect(await standby.setMode(makeApp(), 'eu', 'serve', { fresherThanMs: 60_000 })).toMatchObject({
      acknowledged: 1,
      sent: 1,
    });
    expect(calls).toBe(2);
  });
});

import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withStandbyConfig } from '../../../api/src/routes/widget.ts';
import {
  CONFIG_GLOBAL,
  cleanHosts,
  discover,
  forgetStandbyHosts,
  REFRESH_MS,
  readServed,
  STORAGE_PREFIX,
  standbyHosts,
} from './standby-hosts.ts';

const MAIN = 'https://api.example';

function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (k) => items.get(k) ?? null,
    setItem: (k, v) => void items.set(k, String(v)),
    removeItem: (k) => void items.delete(k),
    key: (i) => [...items.keys()][i] ?? null,
  };
}

function answer(status: number, body: unknown) {
  return vi.fn(async () => new Response(JSON.stringify(body), { status }));
}

afterEach(() => {
  vi.unstubAllGlobals();
  forgetStandbyHosts();
});

describe('standby hosts: where the widget learns them', () => {
  it('keeps only absolute http(s) URLs, without trailing slashes or duplicates', () => {
    expect(
      cleanHosts(['https://b1.example/', 'javascript:alert(1)', 42, 'https://b1.example', 'http://b2:8081']),
    ).toEqual(['https://b1.example', 'http://b2:8081']);
    expect(cleanHosts('https://b1.example')).toEqual([]);
  });

  it('reads the statement the API puts first in the gatehouse.js it serves', () => {
    const loader = { body: Buffer.from('/* loader */'), etag: '"x"' };
    const served = withStandbyConfig(loader, [
      'https://bypass1.example',
      'https://bypass2.example/</script>',
    ]);
    expect(served.etag).not.toBe(loader.etag);
    expect(served.body.toString()).not.toContain('</script>');
    const window: Record<string, unknown> = {};
    runInNewContext(served.body.toString(), { window });
    expect(Object.keys(window)).toEqual([CONFIG_GLOBAL]);
    expect(readServed(window)).toEqual(['https://bypass1.example', 'https://bypass2.example/</script>']);
    // No standby hosts configured: the loader is served as built.
    expect(withStandbyConfig(loader, [])).toBe(loader);
    expect(readServed({})).toEqual([]);
  });

  it('precedence: the bypassServers option, then the served list, then what discovery stored', () => {
    const store = memoryStorage();
    store.setItem(STORAGE_PREFIX + MAIN, JSON.stringify({ bypass: ['https://stored.example'], at: 1 }));
    expect(standbyHosts(MAIN, ['https://mine.example'], store, ['https://served.example'])).toEqual({
      hosts: ['https://mine.example'],
      source: 'option',
    });
    expect(standbyHosts(MAIN, [], store, ['https://served.example']).source).toBe('served');
    expect(standbyHosts(MAIN, undefined, store, [])).toEqual({
      hosts: ['https://stored.example'],
      source: 'discovered',
    });
    expect(standbyHosts('https://other.example', undefined, memoryStorage(), [])).toEqual({
      hosts: [],
      source: 'none',
    });
  });

  it('discovery: GET {main}/v1/standby once the main API answered; kept in memory and localStorage', async () => {
    const fetch = answer(200, { code: 0, data: { bypass: ['https://b1.example', 'https://b2.example'] } });
    vi.stubGlobal('fetch', fetch);
    const store = memoryStorage();
    await discover(MAIN, 'none', store, 1000);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(String((fetch.mock.calls[0] as unknown[])[0])).toBe(`${MAIN}/v1/standby`);
    expect(standbyHosts(MAIN, undefined, store, []).hosts).toEqual([
      'https://b1.example',
      'https://b2.example',
    ]);
    // A page opened later (memory gone) still knows them, e.g. during an outage.
    forgetStandbyHosts();
    expect(standbyHosts(MAIN, undefined, store, []).hosts).toEqual([
      'https://b1.example',
      'https://b2.example',
    ]);
    // Fresh: not fetched again; old: fetched again.
    await discover(MAIN, 'discovered', store, 2000);
    expect(fetch).toHaveBeenCalledTimes(1);
    await discover(MAIN, 'discovered', store, 1000 + REFRESH_MS + 1);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it('discovery is skipped when the option or the served list gives the hosts, and never throws', async () => {
    const fetch = answer(500, {});
    vi.stubGlobal('fetch', fetch);
    await discover(MAIN, 'option', memoryStorage());
    await discover(MAIN, 'served', memoryStorage());
    expect(fetch).not.toHaveBeenCalled();
    await expect(discover(MAIN, 'none', memoryStorage())).resolves.toBeUndefined();
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    forgetStandbyHosts();
    await expect(discover(MAIN, 'none', memoryStorage())).resolves.toBeUndefined();
  });

  it('a refused or broken localStorage changes nothing', () => {
    const broken = memoryStorage();
    broken.getItem = () => {
      throw new Error('SecurityError');
    };
    expect(standbyHosts(MAIN, undefined, broken, [])).toEqual({ hosts: [], source: 'none' });
    const garbage = memoryStorage();
    garbage.setItem(STORAGE_PREFIX + MAIN, '{not json');
    expect(standbyHosts(MAIN, undefined, garbage, []).source).toBe('none');
  });
});

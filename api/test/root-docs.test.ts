import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

/* The API's address answers a person and a script: a page of links, the same links as JSON, a reference. */
const run = await databaseAvailable();

describe.runIf(run)('root page and API reference', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('GET / answers a browser with a small HTML page linking the console, docs, widget and health', async () => {
    const res = await fetch(`${api.url}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('vary')).toMatch(/Accept/i);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    for (const href of [
      '/console',
      '/docs',
      '/openapi.json',
      '/widget/gatehouse.js',
      '/healthz',
      '/readyz',
    ]) {
      expect(html).toContain(`href="${href}"`);
    }
  });

  it('GET / answers JSON to Accept: application/json and to curl', async () => {
    for (const accept of ['application/json', '*/*']) {
      const res = await fetch(`${api.url}/`, { headers: { accept } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await res.json();
      expect(body).toMatchObject({
        code: 0,
        data: {
          service: 'gatehouse',
          links: {
            console: '/console',
            docs: '/docs',
            openapi: '/openapi.json',
            widget: '/widget/gatehouse.js',
            health: '/healthz',
          },
        },
      });
    }
  });

  it('GET /docs serves the reference page and its files from this server only', async () => {
    const res = await fetch(`${api.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith('/'), `${source} is served by the API`).toBe(true);
      const asset = await fetch(api.url + source);
      expect(asset.status, source).toBe(200);
      const etag = asset.headers.get('etag');
      if (source.startsWith('/docs/assets/')) {
        expect(etag).toBeTruthy();
        expect((await fetch(api.url + source, { headers: { 'if-none-match': etag! } })).status).toBe(304);
      }
    }
    expect((await fetch(`${api.url}/docs/assets/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${api.url}/docs/assets/index.html`)).status).toBe(404);
  });
});

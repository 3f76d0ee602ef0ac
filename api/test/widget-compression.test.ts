import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { buildWidget } from '@gatehouse/web/build';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEncoding } from '../src/routes/widget.ts';
import { databaseAvailable, startTestApi, type TestApi } from './harness.ts';

/** A raw GET (no automatic decompression): status, headers and the bytes as sent. */
function raw(url: string, headers: Record<string, string> = {}) {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    }).on('error', reject);
  });
}

const run = await databaseAvailable();

describe('widget files: precompressed at build time, negotiated per request', () => {
  it('chooses brotli, then gzip, by the q-values only (browsers list gzip first)', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(chooseEncoding('gzip, deflate')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip')).toBe('gzip');
    expect(chooseEncoding('br;q=0.5, gzip;q=0.8')).toBe('gzip');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('identity')).toBe('identity');
    expect(chooseEncoding(undefined)).toBe('identity');
    expect(chooseEncoding('gzip;q=0, br;q=0')).toBe('identity');
  });

  it("the build writes each file's brotli and gzip forms beside it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-precompress-'));
    try {
      const built = await buildWidget({ outDir: dir });
      for (const file of Object.values(built)) {
        const body = readFileSync(file.path);
        expect(brotliDecompressSync(readFileSync(`${file.path}.br`)).equals(body), file.file).toBe(true);
        expect(gunzipSync(readFileSync(`${file.path}.gz`)).equals(body), file.file).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  describe.runIf(run)('served by the API', () => {
    let api: TestApi;
    let identity: Buffer;
    beforeAll(async () => {
      api = await startTestApi();
      identity = (await raw(`${api.url}/widget/gatehouse.js`)).body;
    }, 120_000);
    afterAll(() => api?.close());

    it('sends brotli to a browser that accepts it, gzip to one that only takes gzip, and says Vary', async () => {
      const br = await raw(`${api.url}/widget/gatehouse.js`, {
        'Accept-Encoding': 'gzip, deflate, br, zstd',
      });
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.vary).toMatch(/Accept-Encoding/i);
      expect(brotliDecompressSync(br.body).equals(identity)).toBe(true);
      expect(br.body.length).toBeLessThan(identity.length / 2);

      const gz = await raw(`${api.url}/widget/gatehouse.js`, { 'Accept-Encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).equals(identity)).toBe(true);

      const plain = await raw(`${api.url}/widget/gatehouse.js`);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
      expect(plain.headers['cache-control']).toMatch(/max-age=300/);
    });

    it('gives each encoding its own ETag, and answers 304 only for the one the client holds', async () => {
      const accept = { 'Accept-Encoding': 'br' };
      const br = await raw(`${api.url}/widget/gatehouse.js`, accept);
      const plain = await raw(`${api.url}/widget/gatehouse.js`);
      const brTag = br.headers.etag as string;
      expect(brTag).not.toBe(plain.headers.etag);
      expect(
        (await raw(`${api.url}/widget/gatehouse.js`, { ...accept, 'If-None-Match': brTag })).status,
      ).toBe(304);
      expect((await raw(`${api.url}/widget/gatehouse.js`, { 'If-None-Match': brTag })).status).toBe(200);
      expect(
        (
          await raw(`${api.url}/widget/gatehouse.js`, {
            ...accept,
            'If-None-Match': plain.headers.etag as string,
          })
        ).status,
      ).toBe(200);
    });

    it('serves the hashed chunks compressed and cacheable forever', async () => {
      const worker = identity.toString('utf8').match(/gatehouse-pow\.[\w-]+\.js/)?.[0];
      expect(worker).toBeTruthy();
      const res = await raw(`${api.url}/widget/${worker}`, { 'Accept-Encoding': 'gzip, br' });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers.vary).toMatch(/Accept-Encoding/i);
    });
  });
});

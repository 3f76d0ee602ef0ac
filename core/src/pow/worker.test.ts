import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('worker.ts', () => {
  it('bundles for browsers with esbuild, with no node: module and under 30 KB gzipped', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('./worker.ts', import.meta.url))],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
    });
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/node:/);
    expect(code).toContain('argon2');
    const { gzipSync } = await import('node:zlib');
    expect(gzipSync(code).length).toBeLessThan(30_000);
  });
});

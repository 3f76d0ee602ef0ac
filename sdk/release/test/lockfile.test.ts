import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * `npm ci` installs exactly package-lock.json or refuses it when it is out of sync with a package.json
 * (a lockfile missing platform packages, such as biome's, must fail here, not make CI fall back to
 * `npm install`). Checked on a
 * copy of the manifests in a scratch folder, with `--dry-run --offline`: npm compares the lockfile with
 * every workspace's package.json without downloading anything or touching the repository's node_modules.
 */
describe('package-lock.json', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gatehouse-lockfile-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('is accepted by npm ci as it is committed (in sync with every package.json)', async () => {
    const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] };
    for (const file of [
      'package.json',
      'package-lock.json',
      ...root.workspaces.map((w) => `${w}/package.json`),
    ]) {
      mkdirSync(dirname(join(scratch, file)), { recursive: true });
      copyFileSync(join(repo, file), join(scratch, file));
    }
    const result = await run(
      'npm',
      [
        'ci',
        '--dry-run',
        '--offline',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--engine-strict=false',
      ],
      { cwd: scratch, env: { ...process.env, npm_config_cache: join(scratch, '.npm-cache') } },
    ).then(
      (r) => ({ ok: true, out: r.stdout + r.stderr }),
      (e: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
    );
    expect(result.out).not.toMatch(/Missing: .* from lock file|in sync/);
    expect(result.ok, result.out).toBe(true);
  });
});

import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../pack.ts';

/*
 * The Go module and the PHP package as a user gets them from their source, outside this repository: the Go
 * module's folder alone (what the module proxy serves from the sdk/go/v* tag) passes its own tests, and the
 * PHP package (the repository's root, for Composer) carries only its SDK. Missing tools skip loudly; under
 * CI=true they fail.
 */
const exec = promisify(execFile);
const LONG = 300_000;
const folders: string[] = [];

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-unpacked-'));
  folders.push(dir);
  return dir;
}

async function tool(command: string, args: string[], why: string): Promise<boolean> {
  try {
    await exec(command, args);
    return true;
  } catch {
    const message = `${command} is not available: ${why}.`;
    if (process.env.CI === 'true') throw new Error(message);
    console.warn(`\n!!! SKIPPING: ${message}\n`);
    return false;
  }
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

/** What the PHP package may carry: its manifest, the licence, and sdk/php's sources, autoloader and README. */
const phpFile = (path: string) =>
  ['composer.json', 'LICENSE', 'sdk/php/LICENSE', 'sdk/php/README.md', 'sdk/php/autoload.php'].includes(
    path,
  ) || /^sdk\/php\/src\/[\w/]+\.php$/.test(path);

const goOk = await tool('go', ['version'], 'the Go module cannot be tested (Go toolchain)');
const gitOk = await tool('git', ['--version'], 'the PHP package archive cannot be listed (git)');
const composerOk =
  (await tool('php', ['--version'], 'the PHP package cannot be tried (apt-get install php-cli)')) &&
  (await tool('composer', ['--version'], 'the PHP package cannot be installed (apt-get install composer)'));

describe.runIf(goOk)('the Go module outside the repository', () => {
  it('carries its README and passes its own tests', { timeout: LONG }, async () => {
    const dir = join(folder(), 'go');
    cpSync(join(REPO, 'sdk/go'), dir, { recursive: true });
    const files = filesUnder(dir);
    expect(files).toContain('README.md');
    expect(files).toContain('testdata/validate.json');
    // A user's shell: no API for the integration tests (they say so and skip), no network, no workspace.
    const { CI: _ci, ...env } = process.env;
    const { stdout } = await exec('go', ['test', './...'], {
      cwd: dir,
      env: { ...env, GOWORK: 'off', GOPROXY: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(stdout).toMatch(/^ok\s+github\.com\/gatehouse\/gatehouse\/sdk\/go\b/m);
  });
});

describe.runIf(gitOk)('the PHP package from the repository', () => {
  it("git archive (Packagist's download) carries only the PHP SDK", async () => {
    const { stdout } = await exec('git', ['archive', '--worktree-attributes', '--format=tar', 'HEAD'], {
      cwd: REPO,
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    });
    const list = join(folder(), 'archive.tar');
    writeFileSync(list, stdout);
    const names = (await exec('tar', ['-tf', list])).stdout.split('\n').filter((n) => n && !n.endsWith('/'));
    expect(names).toContain('composer.json');
    expect(names).toContain('sdk/php/src/Client.php');
    expect(names.filter((n) => !phpFile(n))).toEqual([]);
  });

  it.runIf(composerOk)(
    'a Composer path install mirrors only the PHP SDK, which loads',
    { timeout: LONG },
    async () => {
      const project = folder();
      writeFileSync(
        join(project, 'composer.json'),
        JSON.stringify({
          name: 'example/shop',
          repositories: [
            {
              type: 'path',
              url: REPO,
              options: { symlink: false, versions: { 'gatehouse/gatehouse-php': '1.0.0' } },
            },
          ],
          require: { 'gatehouse/gatehouse-php': '1.0.0' },
        }),
      );
      const env = { ...process.env, COMPOSER_HOME: join(project, '.composer'), COMPOSER_NO_INTERACTION: '1' };
      await exec('composer', ['install', '--no-progress'], { cwd: project, env });
      const files = filesUnder(join(project, 'vendor/gatehouse/gatehouse-php'));
      expect(files).toContain('sdk/php/README.md');
      expect(files.filter((f) => !phpFile(f))).toEqual([]);
      const { stdout } = await exec(
        'php',
        [
          '-r',
          "require 'vendor/autoload.php'; echo get_class(new Gatehouse\\Client(['app_key' => 'ak_x', 'app_secret' => 'sk_x'])), \"\\n\";",
        ],
        { cwd: project },
      );
      expect(stdout.trim()).toBe('Gatehouse\\Client');
    },
  );
});

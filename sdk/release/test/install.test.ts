import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { databaseAvailable, startTestApi, type TestApi } from '@gatehouse/api/testing';
import { solveChallenge } from '@gatehouse/node/headless';
import { chromiumAvailable, launchChromium } from '@gatehouse/web/testing';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Artifacts, GO_MODULE, packRelease, REPO } from '../pack.ts';

const exec = promisify(execFile);

/** The Node lines upstream supports that the package's engines (>=22) admit. */
const MAINTAINED_NODE_LINES = [22, 24, 26];

/*
 * The release artifacts as an integrator gets them: `npm run release:pack` output installed into scratch
 * projects in the OS temporary folder (outside the repository, so nothing resolves through its
 * node_modules or workspaces), each run against a live API: the Node SDK through `import` and `require`,
 * the web package through a bundler (esbuild) in Chromium with its React and Vue examples and in Node
 * (server-side rendering must not touch a DOM), the Go module through `go get` from a module proxy tree,
 * the PHP package through Composer. Missing tools skip loudly; under CI=true they fail.
 */

/** Whether `command` runs here; missing: a loud skip, or a failure under CI=true. */
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

const run = await databaseAvailable();
const browserOk = run && chromiumAvailable();
const goOk = run && (await tool('go', ['version'], 'the Go module cannot be installed (Go toolchain)'));
const phpOk =
  run &&
  (await tool('php', ['--version'], 'the PHP package cannot be tried (apt-get install php-cli)')) &&
  (await tool('composer', ['--version'], 'the PHP package cannot be installed (apt-get install composer)'));

/** npm in a scratch project: offline-first (the repository's install filled the cache), quiet. */
const npm = (cwd: string, ...args: string[]) =>
  exec('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd });

function scratchDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `gatehouse-scratch-${name}-`));
}

/** Bytes under a folder (to show what an install brings). */
function du(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    total += stat.isDirectory() ? du(path) : stat.size;
  }
  return total;
}

describe.runIf(run)('release artifacts installed outside the repository', () => {
  let artifacts: Artifacts;
  let api: TestApi;
  let app: { appKey: string; appSecret: string };
  const scratches: string[] = [];
  const scratch = (name: string) => {
    const dir = scratchDir(name);
    scratches.push(dir);
    return dir;
  };
  /** A fresh pass token of the test-mode app, solved the way the widget does. */
  const passToken = async () =>
    (await solveChallenge({ baseUrl: api.url, appKey: app.appKey, action: 'login' })).passToken;

  beforeAll(async () => {
    artifacts = await packRelease({ outDir: scratch('release') });
    api = await startTestApi();
    app = await api.createApp({ name: 'release-test', test_mode: true });
  }, 600_000);
  afterAll(async () => {
    await api?.close();
    for (const dir of scratches) {
      // Go's module cache is read-only.
      if (existsSync(join(dir, 'gomodcache'))) await exec('chmod', ['-R', 'u+w', join(dir, 'gomodcache')]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('release:pack writes versioned artifacts and their checksums', () => {
    const version = artifacts.version;
    expect(readdirSync(artifacts.outDir).sort()).toEqual(
      [
        `gatehouse-go-v${version}.zip`,
        `gatehouse-node-${version}.tgz`,
        `gatehouse-php-${version}.zip`,
        `gatehouse-web-${version}.tgz`,
        'SHA256SUMS',
        'go',
      ].sort(),
    );
    expect(readFileSync(join(artifacts.outDir, 'SHA256SUMS'), 'utf8').trim().split('\n')).toHaveLength(4);
  });

  it('@gatehouse/node on every maintained Node line (22, 24, 26): import and require both validate a live token; no server dependency comes along', async () => {
    const dir = scratch('node');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch-node', private: true }));
    await npm(dir, 'install', artifacts.node);
    const env = { ...process.env, URL: api.url, APP_KEY: app.appKey, APP_SECRET: app.appSecret };
    writeFileSync(
      join(dir, 'esm.mjs'),
      `import { Gatehouse } from '@gatehouse/node';
import { solveChallenge } from '@gatehouse/node/headless';
const { URL: baseUrl, APP_KEY: appKey, APP_SECRET: appSecret } = process.env;
const { passToken } = await solveChallenge({ baseUrl, appKey, action: 'login' });
const verdict = await new Gatehouse({ appKey, appSecret, baseUrl }).validate(passToken, { expectedAction: 'login' });
console.log(JSON.stringify({ accepted: verdict.accepted, action: verdict.action }));`,
    );
    writeFileSync(
      join(dir, 'cjs.cjs'),
      `const { Gatehouse } = require('@gatehouse/node');
const { solveChallenge } = require('@gatehouse/node/headless');
const { URL: baseUrl, APP_KEY: appKey, APP_SECRET: appSecret } = process.env;
solveChallenge({ baseUrl, appKey, action: 'login' })
  .then(({ passToken }) => new Gatehouse({ appKey, appSecret, baseUrl }).validate(passToken, { expectedAction: 'login' }))
  .then((verdict) => console.log(JSON.stringify({ accepted: verdict.accepted, action: verdict.action })));`,
    );
    // The other maintained lines from the npm registry's node package (the repository runs on 24).
    const lines = scratch('node-lines');
    writeFileSync(join(lines, 'package.json'), JSON.stringify({ name: 'scratch-node-lines', private: true }));
    const nodes: Record<string, string> = { 24: process.execPath };
    for (const major of MAINTAINED_NODE_LINES.filter((m) => m !== 24)) {
      const prefix = join(lines, String(major));
      mkdirSync(prefix);
      writeFileSync(join(prefix, 'package.json'), JSON.stringify({ name: `node-${major}`, private: true }));
      await npm(prefix, 'install', `node@${major}`);
      nodes[major] = join(prefix, 'node_modules/.bin/node');
    }
    for (const [major, node] of Object.entries(nodes)) {
      expect((await exec(node, ['--version'])).stdout).toMatch(new RegExp(`^v${major}\\.`));
      for (const file of ['esm.mjs', 'cjs.cjs']) {
        const { stdout } = await exec(node, [file], { cwd: dir, env });
        expect(JSON.parse(stdout), `node ${major} ${file}`).toEqual({ accepted: true, action: 'login' });
      }
    }
    // Only the SDK and the proof-of-work's WebAssembly: no database driver, no web framework.
    const installed = readdirSync(join(dir, 'node_modules'))
      .flatMap((n) =>
        n.startsWith('@') ? readdirSync(join(dir, 'node_modules', n)).map((m) => `${n}/${m}`) : [n],
      )
      .filter((n) => !n.startsWith('.'))
      .sort();
    expect(installed).toEqual(['@gatehouse/node', 'hash-wasm']);
    expect(du(join(dir, 'node_modules'))).toBeLessThan(2 * 1024 * 1024);
    // Types ship with it, self-contained.
    const types = readFileSync(join(dir, 'node_modules/@gatehouse/node/dist/index.d.ts'), 'utf8');
    expect(types).toContain('declare class Gatehouse');
    expect(types).not.toMatch(/from '@gatehouse\/core/);
  }, 300_000);

  describe.runIf(browserOk)('@gatehouse/web through a bundler', () => {
    let browser: Browser;
    let site: Server;
    let siteUrl: string;
    let dir: string;

    beforeAll(async () => {
      dir = scratch('web');
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'scratch-web', private: true, type: 'module' }),
      );
      await npm(dir, 'install', artifacts.web, 'react@19.3.1', 'react-dom@19.3.1', 'vue@3.5.45');
      mkdirSync(join(dir, 'public'));
      writeFileSync(
        join(dir, 'vanilla.js'),
        `import { render } from '@gatehouse/web';
const { apiServer, appKey } = window.GATEHOUSE_EXAMPLE;
render('#root', { apiServer, appKey, action: 'login', mode: 'invisible',
  onSuccess: (token) => { window.exampleResult = { framework: 'vanilla', token }; },
  onError: (e) => { window.exampleResult = { framework: 'vanilla', error: e.code }; } });`,
      );
      // The examples exactly as the package ships them.
      copyFileSync(join(dir, 'node_modules/@gatehouse/web/react/example/app.jsx'), join(dir, 'react.jsx'));
      copyFileSync(join(dir, 'node_modules/@gatehouse/web/vue/example/app.js'), join(dir, 'vue.js'));
      await build({
        absWorkingDir: dir,
        entryPoints: ['vanilla.js', 'react.jsx', 'vue.js'],
        outdir: join(dir, 'public'),
        bundle: true,
        format: 'esm',
        platform: 'browser',
        jsx: 'automatic',
        minify: true,
        define: {
          'process.env.NODE_ENV': '"production"',
          __VUE_OPTIONS_API__: 'false',
          __VUE_PROD_DEVTOOLS__: 'false',
          __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
        },
        logLevel: 'error',
      });
      site = createServer((req, res) => {
        const name = (req.url ?? '/').split('?')[0]?.slice(1) ?? '';
        if (name.endsWith('.html')) {
          res.setHeader('Content-Type', 'text/html; charset=utf-8');
          const config = JSON.stringify({ apiServer: api.url, appKey: app.appKey });
          res.end(
            `<!doctype html><html lang="en"><head><title>scratch</title></head><body><div id="root"></div>
<script>window.GATEHOUSE_EXAMPLE=${config}</script><script type="module" src="/${name.replace('.html', '.js')}"></script></body></html>`,
          );
        } else if (/^[\w-]+\.js$/.test(name) && existsSync(join(dir, 'public', name))) {
          res.setHeader('Content-Type', 'text/javascript');
          res.end(readFileSync(join(dir, 'public', name)));
        } else {
          res.statusCode = 404;
          res.end();
        }
      }).listen(0, '127.0.0.1');
      await new Promise((resolve) => site.once('listening', resolve));
      siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
      browser = await launchChromium();
    }, 300_000);
    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => site?.close(resolve));
    });

    it('imports in Node without a DOM, and server-side renders the React and Vue components', async () => {
      writeFileSync(
        join(dir, 'ssr.mjs'),
        `import { loadGatehouse } from '@gatehouse/web';
import { GatehouseWidget as ReactWidget } from '@gatehouse/web/react';
import { GatehouseWidget as VueWidget } from '@gatehouse/web/vue';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { createSSRApp, h } from 'vue';
import { renderToString as vueToString } from 'vue/server-renderer';
const props = { apiServer: 'https://gatehouse.example.com', appKey: 'ak_x', action: 'login' };
const react = renderToString(createElement(ReactWidget, props));
const vue = await vueToString(createSSRApp({ render: () => h(VueWidget, props) }));
const load = await loadGatehouse(props).then(() => 'loaded', (e) => e.message);
console.log(JSON.stringify({ react, vue, load, document: typeof document }));`,
      );
      const { stdout } = await exec(process.execPath, ['ssr.mjs'], { cwd: dir });
      const out = JSON.parse(stdout);
      expect(out).toMatchObject({ react: '<div></div>', document: 'undefined' });
      expect(out.vue).toMatch(/^<div[^>]*><\/div>$/);
      expect(out.load).toMatch(/runs in a browser/);
    }, 60_000);

    for (const framework of ['vanilla', 'react', 'vue']) {
      it(`${framework}: the bundled page gets a token the live API accepts`, async () => {
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          const errors: string[] = [];
          page.on('pageerror', (e) => errors.push(String(e)));
          await page.goto(`${siteUrl}/${framework}.html`);
          await page.waitForFunction(
            () => (window as unknown as { exampleResult?: unknown }).exampleResult,
            null,
            {
              timeout: 60_000,
            },
          );
          const result = await page.evaluate(
            () => (window as unknown as { exampleResult: unknown }).exampleResult,
          );
          expect(result).toMatchObject({ framework, token: expect.stringMatching(/^pt_/) });
          const token = (result as { token: string }).token;
          // A hidden field in the form carries it too (the React and Vue examples are forms).
          if (framework !== 'vanilla')
            expect(await page.locator('input[name="gatehouse-token"]').inputValue()).toBe(token);
          const verdict = await api.post(
            '/v1/validate',
            { pass_token: token },
            { 'X-App-Key': app.appKey, 'X-App-Secret': app.appSecret },
          );
          expect(verdict.body.data).toMatchObject({ valid: true, action: 'login' });
          expect(errors).toEqual([]);
        } finally {
          await context.close();
        }
      }, 90_000);
    }
  });

  it.runIf(goOk)(
    'Go: `go get` at the module path from the release proxy tree, then validate a live token',
    async () => {
      const dir = scratch('go');
      const env = {
        ...process.env,
        GOPROXY: `file://${artifacts.goProxy}`,
        GOSUMDB: 'off',
        GOFLAGS: '-modcacherw',
        GOMODCACHE: join(dir, 'gomodcache'),
        GOTOOLCHAIN: 'local',
      };
      writeFileSync(
        join(dir, 'main.go'),
        `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	gatehouse "${GO_MODULE}"
)

func main() {
	client, err := gatehouse.NewClient(os.Getenv("APP_KEY"), os.Getenv("APP_SECRET"), gatehouse.WithBaseURL(os.Getenv("URL")))
	if err != nil {
		panic(err)
	}
	verdict, err := client.Validate(context.Background(), os.Getenv("PASS_TOKEN"), &gatehouse.ValidateParams{ExpectedAction: "login"})
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(map[string]any{"accepted": verdict.Accepted, "action": verdict.Action})
	fmt.Println(string(out))
}
`,
      );
      await exec('go', ['mod', 'init', 'example.com/scratch'], { cwd: dir, env });
      await exec('go', ['get', `${GO_MODULE}@v${artifacts.version}`], { cwd: dir, env });
      // The module comes with its guide and the vectors its own tests read.
      const unpacked = join(dir, 'gomodcache', `${GO_MODULE}@v${artifacts.version}`);
      expect(existsSync(join(unpacked, 'README.md'))).toBe(true);
      expect(existsSync(join(unpacked, 'testdata', 'validate.json'))).toBe(true);
      const token = await passToken();
      const { stdout } = await exec('go', ['run', '.'], {
        cwd: dir,
        env: {
          ...env,
          GOPROXY: 'off',
          URL: api.url,
          APP_KEY: app.appKey,
          APP_SECRET: app.appSecret,
          PASS_TOKEN: token,
        },
      });
      expect(JSON.parse(stdout)).toEqual({ accepted: true, action: 'login' });
    },
    300_000,
  );

  it.runIf(phpOk)(
    'PHP: composer installs the package zip (artifact repository), which validates a live token',
    async () => {
      const dir = scratch('php');
      const repo = join(dir, 'artifacts');
      mkdirSync(repo);
      copyFileSync(artifacts.php, join(repo, 'gatehouse-php.zip'));
      writeFileSync(
        join(dir, 'composer.json'),
        JSON.stringify({
          name: 'scratch/php',
          require: { 'gatehouse/gatehouse-php': artifacts.version },
          repositories: [{ type: 'artifact', url: repo }, { 'packagist.org': false }],
        }),
      );
      const env = {
        ...process.env,
        COMPOSER_HOME: join(dir, '.composer'),
        COMPOSER_ALLOW_SUPERUSER: '1',
        COMPOSER_NO_INTERACTION: '1',
      };
      // Composer's own validation: strict for the repository root's composer.json (Packagist and VCS
      // repositories); the zip's carries the version an artifact repository needs, which strict mode warns of.
      await exec('composer', ['validate', '--strict', '--no-check-lock', join(REPO, 'composer.json')], {
        env,
      });
      await exec('composer', ['install', '--no-progress'], { cwd: dir, env });
      await exec('composer', ['validate', join(dir, 'vendor/gatehouse/gatehouse-php/composer.json')], {
        env,
      });
      // The repository's archive excludes name repository paths; the zip is the package alone.
      const installed = JSON.parse(
        readFileSync(join(dir, 'vendor/gatehouse/gatehouse-php/composer.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect(installed).not.toHaveProperty('archive');
      expect(existsSync(join(dir, 'vendor/gatehouse/gatehouse-php/README.md'))).toBe(true);
      writeFileSync(
        join(dir, 'validate.php'),
        `<?php
require __DIR__ . '/vendor/autoload.php';
$gatehouse = new Gatehouse\\Client(['app_key' => getenv('APP_KEY'), 'app_secret' => getenv('APP_SECRET'), 'base_url' => getenv('URL')]);
$verdict = $gatehouse->validate(getenv('PASS_TOKEN'), ['expected_action' => 'login']);
echo json_encode(['accepted' => $verdict->accepted, 'action' => $verdict->action]), "\\n";
`,
      );
      const token = await passToken();
      const { stdout } = await exec('php', ['validate.php'], {
        cwd: dir,
        env: { ...env, URL: api.url, APP_KEY: app.appKey, APP_SECRET: app.appSecret, PASS_TOKEN: token },
      });
      expect(JSON.parse(stdout)).toEqual({ accepted: true, action: 'login' });
    },
    180_000,
  );
});

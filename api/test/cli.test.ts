import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseAvailable, freshPostgresDatabase, TEST_DATABASE } from './harness.ts';

/*
 * The real `gatehouse` bin (node_modules/.bin/gatehouse, as `npx gatehouse` runs it) against a real API
 * process (`node api/src/server.ts`) on a temporary working directory, then on its database directly once
 * the server is stopped. The pglite project uses the embedded database; the postgres project a fresh
 * PostgreSQL database through DATABASE_URL.
 */
const run = await databaseAvailable();

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'node_modules', '.bin', 'gatehouse');
const SERVER = join(ROOT, 'api', 'src', 'server.ts');
const LONG = 180_000;

interface Result {
  args: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Every run of the command in this file, to check at the end that no secret leaked. */
const results: Result[] = [];
const cleanups: (() => unknown)[] = [];

/** The environment of a fresh shell: none of the variables the command reads, Node 24 first on PATH. */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of ['GATEHOUSE_URL', 'GATEHOUSE_ADMIN_TOKEN', 'DATA_DIR', 'PGLITE_DIR', 'DATABASE_URL']) {
    delete env[key];
  }
  for (const key of ['PORT', 'HOST', 'TEST_DATABASE']) delete env[key];
  env.PATH = `${dirname(process.execPath)}${delimiter}${env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/** Runs the bin the way a shell would (through its shebang), in `cwd` with `env`. */
async function gatehouse(args: string[], cwd: string, env: Record<string, string>): Promise<Result> {
  const child = spawn(BIN, args, { cwd, env: shellEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  const result = { args, code, stdout, stderr };
  results.push(result);
  return result;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A port nothing listens on: bound once to get a free number, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

interface ServerProcess {
  url: string;
  /** SIGTERM, then the exit code of a graceful shutdown. */
  stop(): Promise<number | null>;
}

/** Starts `node api/src/server.ts` in `cwd` on an ephemeral port; resolves once it listens. */
async function startServer(cwd: string, env: Record<string, string>): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [SERVER], {
    cwd,
    env: shellEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`the API did not start in 90 s: ${stderr}`)), 90_000);
    child.once('exit', (code) => reject(new Error(`the API exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'gatehouse api listening' && entry.url) {
          clearTimeout(timer);
          resolveUrl(entry.url);
        }
      } catch {}
    });
  });
  let stopped: Promise<number | null> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    })();
    return stopped;
  };
  cleanups.push(stop);
  return { url, stop };
}

/** A fresh database for the postgres project (nothing for the embedded one). */
async function databaseEnv(): Promise<Record<string, string>> {
  if (TEST_DATABASE !== 'postgres') return {};
  const fresh = await freshPostgresDatabase();
  cleanups.push(fresh.drop);
  return { DATABASE_URL: fresh.url };
}

/** Authenticates as the app with a garbage pass token: `token_not_found` means the credentials passed. */
async function authAs(url: string, appKey: string, secret: string): Promise<string> {
  const res = await fetch(`${url}/v1/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-App-Key': appKey, 'X-App-Secret': secret },
    body: JSON.stringify({ pass_token: 'pt_garbage' }),
  });
  return ((await res.json()) as { error: string }).error;
}

/** The challenge a visitor would get: a real /v1/challenge/init as a browser sends it. */
async function challengeFor(
  url: string,
  appKey: string,
): Promise<{ tier: string; image?: { kind: string } }> {
  const res = await fetch(`${url}/v1/challenge/init`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36',
      'accept-language': 'en-GB,en;q=0.9',
    },
    body: JSON.stringify({ app_key: appKey, action: 'login' }),
  });
  const body = (await res.json()) as { data: { tier: string; image?: { kind: string } } };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data;
}

const PASSED = 'token_not_found';
const SECRET_WARNING = 'shown only this once';
const FALLBACK_NOTICE = /no API is running at http:\/\/127\.0\.0\.1:\d+; using .* directly/;

function ok(result: Result): Result {
  expect(result.code, `gatehouse ${result.args.join(' ')}\n${result.stderr}`).toBe(0);
  return result;
}

function parsed(result: Result) {
  return JSON.parse(ok(result).stdout) as Record<string, unknown> & { app_key: string; app_secret: string };
}

interface DocExample {
  line: string;
  args: string[];
  exit: number;
  stderr: string | undefined;
  phase: 'server' | 'no-server';
}

/** The `npx gatehouse ...` lines of docs/cli.md's sh blocks, with their `# exit N: text` expectations. */
function docExamples(): DocExample[] {
  const examples: DocExample[] = [];
  let phase: DocExample['phase'] = 'server';
  let fence: 'sh' | 'other' | null = null;
  for (const line of readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8').split('\n')) {
    const marker = /<!-- cli\.test: (server|no-server) -->/.exec(line);
    if (marker) phase = marker[1] as DocExample['phase'];
    if (line.startsWith('```')) {
      fence = fence ? null : line.trim() === '```sh' ? 'sh' : 'other';
      continue;
    }
    if (fence !== 'sh' || !line.startsWith('npx gatehouse ')) continue;
    const [command, comment = ''] = line.split(/\s+#\s+/, 2);
    const expectation = /^exit (\d+): (.+)$/.exec(comment.trim());
    const words = [...command!.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
    examples.push({
      line,
      args: words.slice(2),
      exit: expectation ? Number(expectation[1]) : 0,
      stderr: expectation?.[2],
      phase,
    });
  }
  return examples;
}

async function runDocExamples(phase: DocExample['phase'], cwd: string, env: Record<string, string>) {
  const examples = docExamples().filter((e) => e.phase === phase);
  expect(examples.length).toBeGreaterThan(0);
  let appKey: string | undefined;
  for (const example of examples) {
    if (example.args.includes('$APP_KEY')) expect(appKey, 'an app create --json example first').toBeDefined();
    const args = example.args.map((a) => (a === '$APP_KEY' ? appKey! : a));
    const result = await gatehouse(args, cwd, env);
    expect(result.code, `${example.line}\n${result.stderr}`).toBe(example.exit);
    if (example.stderr) expect(result.stderr).toContain(example.stderr);
    if (example.exit === 0 && args[1] === 'create' && args.includes('--json')) {
      appKey ??= (JSON.parse(result.stdout) as { app_key: string }).app_key;
    }
  }
  return examples;
}

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.runIf(run)('gatehouse command against a running API', { timeout: LONG }, () => {
  let work: string;
  let dbEnv: Record<string, string>;
  let server: ServerProcess;
  let env: Record<string, string>;
  const cli = (...args: string[]) => gatehouse(args, work, env);

  beforeAll(async () => {
    work = tempDir();
    dbEnv = await databaseEnv();
    // No DATA_DIR: the server and the command both use .gatehouse-data in the working directory.
    server = await startServer(work, dbEnv);
    env = { GATEHOUSE_URL: server.url, ...dbEnv };
  }, LONG);

  it('prints help for the command, for app and for each subcommand', async () => {
    const top = ok(await cli('--help'));
    expect(top.stdout).toContain('Usage: gatehouse <command>');
    expect(top.stdout).toMatch(/^ {2}app {2}/m);
    const app = ok(await cli('app', '--help'));
    for (const sub of [
      'create',
      'list',
      'show',
      'update',
      'rotate-secret',
      'rotate-key',
      'disable',
      'enable',
    ]) {
      expect(app.stdout).toMatch(new RegExp(`^ {2}${sub} `, 'm'));
    }
    const create = ok(await cli('app', 'create', '--help'));
    for (const flag of ['--name', '--plan', '--quota', '--overage', '--subscription-expires', '--json']) {
      expect(create.stdout).toContain(flag);
    }
    expect(ok(await cli('help', 'app', 'rotate-secret')).stdout).toContain('--grace SECONDS');
    const bare = await cli();
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: gatehouse <command>');
    expect(bare.stdout).toBe('');
  });

  it('app create --name shop --json prints app_key and app_secret, which authenticate', async () => {
    const result = await cli('app', 'create', '--name', 'shop', '--json');
    const app = parsed(result);
    expect(app.app_key).toMatch(/^ak_/);
    expect(app.app_secret).toMatch(/^sk_/);
    expect(app).toMatchObject({ name: 'shop', plan: 'free', disabled: false });
    expect(result.stderr).toContain(SECRET_WARNING);
    expect(result.stderr).not.toMatch(FALLBACK_NOTICE);
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe(PASSED);
  });

  it('creates with every setting flag; show and list display them and never a secret', async () => {
    const created = ok(
      await cli(
        'app',
        'create',
        '--name',
        'blog',
        '--plan',
        'pro',
        '--quota',
        '5000',
        '--no-overage',
        '--server-token-required',
        '--test-mode',
        '--pass-token-ttl',
        '120',
        '--client-ip-policy',
        'reject',
        '--subscription-expires',
        '2099-12-31',
      ),
    );
    expect(created.stdout).toContain('Created app blog.');
    const secret = /App secret\s+(sk_\S+)/.exec(created.stdout)?.[1];
    const key = /App key\s+(ak_\S+)/.exec(created.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(created.stderr).toContain(SECRET_WARNING);
    expect(await authAs(server.url, key!, secret!)).toBe(PASSED);

    const shown = parsed(await cli('app', 'show', key!, '--json'));
    expect(shown).toMatchObject({
      app_key: key,
      name: 'blog',
      plan: 'pro',
      effective_plan: 'pro',
      monthly_quota: 5000,
      overage_allowed: false,
      server_token_required: true,
      test_mode: true,
      pass_token_ttl: 120,
      client_ip_policy: 'reject',
      subscription_expires_at: '2099-12-31T00:00:00.000Z',
    });
    expect(shown).not.toHaveProperty('app_secret');
    const human = ok(await cli('app', 'show', key!));
    expect(human.stdout).toMatch(/Monthly quota\s+5,000 \(no overage\)/);
    expect(human.stdout).toMatch(/Server token\s+required/);
    expect(human.stdout).not.toContain('sk_');
    expect(human.stderr).toBe('');

    const table = ok(await cli('app', 'list'));
    expect(table.stdout).toMatch(/^APP KEY\s+NAME\s+PLAN\s+MONTHLY QUOTA\s+STATUS\s+CREATED$/m);
    expect(table.stdout).toMatch(new RegExp(`^${key}\\s+blog\\s+pro\\s+5,000\\s+enabled`, 'm'));
    expect(table.stdout).toMatch(/^ak_\S+\s+shop\s+free\s+10,000\s+enabled/m);
    expect(table.stdout).not.toContain('sk_');
    const list = JSON.parse(ok(await cli('app', 'list', '--json')).stdout) as { apps: { name: string }[] };
    expect(list.apps.map((a) => a.name)).toEqual(['shop', 'blog']);
    expect(JSON.stringify(list)).not.toContain('app_secret');
  });

  it('--force-challenge pins the challenge every visitor gets; --risk-policy takes JSON, @file or default', async () => {
    const app = parsed(
      await cli('app', 'create', '--name', 'forced', '--force-challenge', 'slide', '--json'),
    );
    expect(app.risk_policy).toEqual({ invisible_below: 0, image_below: 101, image_kinds: ['slide'] });
    const slide = await challengeFor(server.url, app.app_key);
    expect(slide.tier).toBe('image');
    expect(slide.image?.kind).toBe('slide');

    const limits = { rate_limit: { ip_per_minute: 500, high_risk_ip_per_minute: 100 } };
    writeFileSync(join(work, 'policy.json'), JSON.stringify(limits));
    const fromFile = parsed(
      await cli('app', 'update', app.app_key, '--risk-policy', '@policy.json', '--json'),
    );
    expect(fromFile.risk_policy).toEqual(limits);
    // Forcing changes the tier fields only: the limits from the file stay.
    const invisible = parsed(
      await cli('app', 'update', app.app_key, '--force-challenge', 'invisible', '--json'),
    );
    expect(invisible.risk_policy).toEqual({ ...limits, invisible_below: 101, image_below: 101 });
    expect((await challengeFor(server.url, app.app_key)).tier).toBe('invisible');
    const click = parsed(await cli('app', 'update', app.app_key, '--force-challenge', 'click', '--json'));
    expect((await challengeFor(server.url, app.app_key)).image?.kind).toBe('click');
    expect(click.risk_policy).toMatchObject(limits);
    const off = parsed(await cli('app', 'update', app.app_key, '--force-challenge', 'off', '--json'));
    expect(off.risk_policy).toEqual(limits);
    const inline = parsed(
      await cli(
        'app',
        'update',
        app.app_key,
        '--risk-policy',
        '{"image_kinds":["select"],"invisible_below":20}',
        '--json',
      ),
    );
    expect(inline.risk_policy).toEqual({ image_kinds: ['select'], invisible_below: 20 });
    expect(ok(await cli('app', 'show', app.app_key)).stdout).toMatch(
      /Risk policy\s+\{"image_kinds":\["select"\]/,
    );
    const reset = parsed(
      await cli(
        'app',
        'update',
        app.app_key,
        '--risk-policy',
        'default',
        '--allowed-domains',
        'shop.test, www.shop.test',
        '--json',
      ),
    );
    expect(reset).toMatchObject({ risk_policy: {}, allowed_domains: ['shop.test', 'www.shop.test'] });
    expect(
      parsed(await cli('app', 'update', app.app_key, '--allowed-domains', 'any', '--json')).allowed_domains,
    ).toEqual([]);

    const refused: [string[], string][] = [
      [['--risk-policy', '{"invisible_below":"x"}'], '--risk-policy: invisible_below:'],
      [
        ['--risk-policy', '{"invisible_below":80,"image_below":10}'],
        'invisible_below must not exceed image_below',
      ],
      [['--risk-policy', '{"colour":1}'], '--risk-policy: unknown field colour'],
      [['--risk-policy', '[1]'], '--risk-policy must be a JSON object'],
      [['--risk-policy', '@missing.json'], '--risk-policy: cannot read'],
      [['--force-challenge', 'gold'], '--force-challenge must be one of invisible, image, slide'],
    ];
    for (const [flags, message] of refused) {
      const result = await cli('app', 'update', app.app_key, ...flags);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it('update changes only the settings given', async () => {
    const app = parsed(
      await cli('app', 'create', '--name', 'upd', '--plan', 'pro', '--quota', '777', '--test-mode', '--json'),
    );
    const updated = parsed(
      await cli(
        'app',
        'update',
        app.app_key,
        '--name',
        'updated',
        '--no-test-mode',
        '--pass-token-ttl',
        '60',
        '--json',
      ),
    );
    expect(updated).toMatchObject({ name: 'updated', test_mode: false, pass_token_ttl: 60, plan: 'pro' });
    expect(updated.monthly_quota).toBe(777);
    expect(updated).not.toHaveProperty('app_secret');
    const reset = parsed(
      await cli(
        'app',
        'update',
        app.app_key,
        '--quota',
        'plan',
        '--subscription-expires',
        '2020-01-01',
        '--json',
      ),
    );
    expect(reset).toMatchObject({ name: 'updated', effective_plan: 'free', monthly_quota: 10_000 });
    const human = ok(await cli('app', 'show', app.app_key));
    expect(human.stdout).toMatch(/Plan\s+free \(pro subscription expired\)/);
  });

  it('rotate-secret: both secrets work during --grace, and --grace 0 stops the old one', async () => {
    const app = parsed(await cli('app', 'create', '--name', 'rot', '--json'));
    const rotated = ok(await cli('app', 'rotate-secret', app.app_key, '--grace', '600'));
    const second = /App secret\s+(sk_\S+)/.exec(rotated.stdout)?.[1];
    expect(second).toBeDefined();
    expect(second).not.toBe(app.app_secret);
    expect(rotated.stdout).toMatch(/Previous secret\s+still valid until \d{4}-/);
    expect(rotated.stderr).toContain(SECRET_WARNING);
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe(PASSED);
    expect(await authAs(server.url, app.app_key, second!)).toBe(PASSED);

    const again = parsed(await cli('app', 'rotate-secret', app.app_key, '--grace', '0', '--json'));
    expect(again.secret_rotation_grace_until).toBeNull();
    expect(await authAs(server.url, app.app_key, again.app_secret)).toBe(PASSED);
    expect(await authAs(server.url, app.app_key, second!)).toBe('invalid_app_secret');
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe('invalid_app_secret');
  });

  it('rotate-key: the new key works, the old one during --grace; --grace 0 stops it; no secret printed', async () => {
    const app = parsed(await cli('app', 'create', '--name', 'rekey', '--json'));
    const rotated = ok(await cli('app', 'rotate-key', app.app_key, '--grace', '600'));
    const second = /App key\s+(ak_\S+)/.exec(rotated.stdout)?.[1];
    expect(second).toBeDefined();
    expect(second).not.toBe(app.app_key);
    expect(rotated.stdout).toContain('New key issued.');
    expect(rotated.stdout).toMatch(new RegExp(`Previous key\\s+${app.app_key}, still valid until \\d{4}-`));
    expect(rotated.stdout).not.toContain('sk_');
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe(PASSED);
    expect(await authAs(server.url, second!, app.app_secret)).toBe(PASSED);

    const again = parsed(await cli('app', 'rotate-key', second!, '--grace', '0', '--json'));
    expect(again.previous_app_key).toBeNull();
    expect(again.key_rotation_grace_until).toBeNull();
    expect(await authAs(server.url, again.app_key, app.app_secret)).toBe(PASSED);
    expect(await authAs(server.url, second!, app.app_secret)).toBe('invalid_app_key');
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe('invalid_app_key');
  });

  it("disable makes the app's credentials answer app_disabled at once; enable restores them", async () => {
    const app = parsed(await cli('app', 'create', '--name', 'dis', '--json'));
    const disabled = ok(await cli('app', 'disable', app.app_key));
    expect(disabled.stdout).toMatch(/Status\s+disabled/);
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe('app_disabled');
    expect(parsed(await cli('app', 'show', app.app_key, '--json')).disabled).toBe(true);
    const table = ok(await cli('app', 'list')).stdout;
    expect(table).toMatch(new RegExp(`^${app.app_key}\\s+dis\\s+free\\s+10,000\\s+disabled`, 'm'));
    const enabled = parsed(await cli('app', 'enable', app.app_key, '--json'));
    expect(enabled.disabled).toBe(false);
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe(PASSED);
  });

  it("reports the API's refusals on stderr with exit 1, and usage mistakes with exit 2", async () => {
    const app = parsed(await cli('app', 'create', '--name', 'err', '--json'));
    const refusals: [string[], string][] = [
      [['app', 'show', 'ak_doesnotexist'], 'No app with key ak_doesnotexist. (not_found)'],
      [['app', 'show', 'not-a-key'], 'appKey: not an app key (invalid_request)'],
      [['app', 'update', app.app_key, '--pass-token-ttl', '5'], 'pass_token_ttl: Too small'],
      [['app', 'update', app.app_key, '--quota', '3000000000'], 'monthly_quota'],
      [['app', 'update', app.app_key, '--subscription-expires', 'someday'], 'subscription_expires_at'],
      [['app', 'rotate-secret', app.app_key, '--grace', '9999999'], 'grace_seconds: Too big'],
      [['app', 'disable', 'ak_doesnotexist'], '(not_found)'],
    ];
    for (const [args, message] of refusals) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toMatch(/^gatehouse: /);
      expect(result.stdout).toBe('');
    }
    const usage: [string[], string][] = [
      [['app', 'create'], "'gatehouse app create' needs --name NAME."],
      [['app', 'create', '--name'], '--name needs a value'],
      [['app', 'create', '--name', 'x', '--plan', 'gold'], '--plan must be one of free, pro, enterprise'],
      [['app', 'create', '--name', 'x', '--quota', 'lots'], "--quota must be a whole number, got 'lots'."],
      [['app', 'create', '--name', 'x', '--client-ip-policy', 'block'], '--client-ip-policy must be one of'],
      [
        ['app', 'create', '--name', 'x', '--colour', 'red'],
        "Unknown option --colour for 'gatehouse app create'",
      ],
      [['app', 'show'], "Missing KEY: usage is 'gatehouse app show KEY [--json]'."],
      [['app', 'show', app.app_key, 'extra'], "Unexpected argument 'extra'"],
      [['app', 'update', app.app_key], 'Nothing to update'],
      [['app', 'rotate-secret', app.app_key, '--grace=-5'], "--grace must be a whole number, got '-5'."],
      [['app', 'list', '--overage'], "Unknown option --overage for 'gatehouse app list'"],
      [['app', 'frobnicate'], "Unknown subcommand 'app frobnicate'"],
      [['frobnicate'], "Unknown command 'frobnicate'"],
      [['app', 'list', '--url', 'ftp://example.com'], '--url must be an http:// or https:// URL'],
    ];
    for (const [args, message] of usage) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
    }
    // Nothing was created by the refused calls.
    const names = (JSON.parse(ok(await cli('app', 'list', '--json')).stdout) as { apps: { name: string }[] })
      .apps;
    expect(names.map((a) => a.name)).not.toContain('x');
  });

  it('finds the admin token in DATA_DIR/admin-token, or takes it from a flag or the environment', async () => {
    const elsewhere = tempDir();
    const token = readFileSync(join(work, '.gatehouse-data', 'admin-token'), 'utf8').trim();
    const inOther = (args: string[], extra: Record<string, string> = {}) =>
      gatehouse(args, elsewhere, { GATEHOUSE_URL: server.url, ...extra });

    const none = await inOther(['app', 'list']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('Missing or invalid admin token. (unauthorized)');
    expect(none.stderr).toContain(`No admin token was found`);
    // A folder outside any checkout: no data folder, so no token file either, and it says so.
    expect(none.stderr).toContain('no data folder was found from this folder upwards');
    const wrongEnv = await inOther(['app', 'list'], { GATEHOUSE_ADMIN_TOKEN: 'not-the-admin-token-at-all' });
    expect(wrongEnv.code).toBe(1);
    expect(wrongEnv.stderr).toContain('The admin token came from GATEHOUSE_ADMIN_TOKEN.');
    const wrongFlag = await inOther(['app', 'list', '--admin-token', 'nope']);
    expect(wrongFlag.code).toBe(1);
    expect(wrongFlag.stderr).toContain('The admin token came from --admin-token.');

    ok(await inOther(['app', 'list', '--admin-token', token]));
    ok(await inOther(['app', 'list'], { GATEHOUSE_ADMIN_TOKEN: token }));
    ok(await inOther(['app', 'list'], { DATA_DIR: join(work, '.gatehouse-data') }));
    // The flag wins over the environment, which wins over the file.
    const flagFirst = await inOther(['app', 'list', '--admin-token', 'nope'], {
      GATEHOUSE_ADMIN_TOKEN: token,
    });
    expect(flagFirst.code).toBe(1);
    const envFirst = await gatehouse(['app', 'list'], work, {
      ...env,
      GATEHOUSE_ADMIN_TOKEN: 'wrong-token-x',
    });
    expect(envFirst.code).toBe(1);
    // --url beats GATEHOUSE_URL.
    ok(
      await inOther(['app', 'list', '--url', server.url, '--admin-token', token], {
        GATEHOUSE_URL: 'http://127.0.0.1:1',
      }),
    );
  });

  it('never falls back to the database when --url names the API', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await cli('app', 'list', '--url', url);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Cannot reach the Gatehouse API at ${url}: connection refused.`);
    expect(result.stderr).not.toMatch(FALLBACK_NOTICE);
  });

  it('runs the examples of docs/cli.md as documented', async () => {
    const examples = await runDocExamples('server', work, env);
    // Every subcommand is documented with at least one example that ran.
    for (const sub of [
      'create',
      'list',
      'show',
      'update',
      'rotate-secret',
      'rotate-key',
      'disable',
      'enable',
    ]) {
      expect(examples.some((e) => e.args[0] === 'app' && e.args[1] === sub && e.exit === 0)).toBe(true);
    }
  });

  it('does not open the database of the running server behind its back', async () => {
    const elsewhere = `http://127.0.0.1:${await closedPort()}`;
    const result = await gatehouse(['app', 'list', '--json'], work, { ...env, GATEHOUSE_URL: elsewhere });
    if (TEST_DATABASE === 'pglite') {
      // PGlite is single-process: the running server holds the files, so the command must refuse.
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('is open in another process (postmaster.pid exists)');
      expect(result.stderr).toContain('pass --url');
    } else {
      // PostgreSQL takes many clients: through DATABASE_URL the command sees the server's apps.
      expect(result.stderr).toMatch(FALLBACK_NOTICE);
      const apps = (JSON.parse(ok(result).stdout) as { apps: { name: string }[] }).apps;
      expect(apps.map((a) => a.name)).toContain('shop');
    }
  });

  it('once the server stops, works on the same database directly, then the server sees it', async () => {
    expect(await server.stop()).toBe(0);
    if (TEST_DATABASE === 'pglite') {
      expect(existsSync(join(work, '.gatehouse-data', 'pgdata', 'postmaster.pid'))).toBe(false);
    }
    const down = { ...env, GATEHOUSE_URL: `http://127.0.0.1:${await closedPort()}` };
    const list = await gatehouse(['app', 'list', '--json'], work, down);
    expect(list.stderr).toMatch(FALLBACK_NOTICE);
    expect(list.stderr).toContain(
      TEST_DATABASE === 'pglite' ? join(work, '.gatehouse-data', 'pgdata') : 'postgres://',
    );
    const names = (JSON.parse(ok(list).stdout) as { apps: { name: string }[] }).apps.map((a) => a.name);
    expect(names).toEqual(expect.arrayContaining(['shop', 'blog', 'rot', 'dis']));

    await runDocExamples('no-server', work, down);

    const created = await gatehouse(
      ['app', 'create', '--name', 'offline', '--plan', 'pro', '--json'],
      work,
      down,
    );
    const offline = parsed(created);
    expect(created.stderr).toMatch(FALLBACK_NOTICE);
    expect(created.stderr).toContain(SECRET_WARNING);
    const rotated = await gatehouse(
      ['app', 'rotate-secret', offline.app_key, '--grace', '0', '--json'],
      work,
      down,
    );
    const secret = parsed(rotated).app_secret;
    const again = await startServer(work, dbEnv);
    try {
      expect(await authAs(again.url, offline.app_key, secret)).toBe(PASSED);
      expect(await authAs(again.url, offline.app_key, offline.app_secret)).toBe('invalid_app_secret');
      const shown = parsed(
        await gatehouse(['app', 'show', offline.app_key, '--json'], work, {
          ...env,
          GATEHOUSE_URL: again.url,
        }),
      );
      expect(shown).toMatchObject({ name: 'offline', plan: 'pro' });
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});

describe.runIf(run)('gatehouse command with no server, on a fresh DATA_DIR', { timeout: LONG }, () => {
  it('creates the database, runs the migrations and manages apps in it', async () => {
    const dataDir = join(tempDir(), 'data');
    const cwd = tempDir();
    const env = {
      DATA_DIR: dataDir,
      GATEHOUSE_URL: `http://localhost:${await closedPort()}`,
      ...(await databaseEnv()),
    };

    const created = await gatehouse(['app', 'create', '--name', 'fresh', '--json'], cwd, env);
    const app = parsed(created);
    expect(app.app_key).toMatch(/^ak_/);
    expect(app.app_secret).toMatch(/^sk_/);
    expect(created.stderr).toMatch(/no API is running at http:\/\/localhost:\d+; using .* directly/);
    if (TEST_DATABASE === 'pglite') {
      expect(created.stderr).toContain(`the embedded database in ${join(dataDir, 'pgdata')}`);
      // Closed cleanly: the next process may open it.
      expect(existsSync(join(dataDir, 'pgdata', 'PG_VERSION'))).toBe(true);
      expect(existsSync(join(dataDir, 'pgdata', 'postmaster.pid'))).toBe(false);
    } else {
      expect(created.stderr).toMatch(/the database at postgres:\/\/[^@\s]+\/gh_test_\w+ directly/);
    }
    // No admin token is needed, nor written, to work on the database directly.
    expect(existsSync(join(dataDir, 'admin-token'))).toBe(false);

    // The same validation as the admin API's, with the same messages.
    const invalid = await gatehouse(['app', 'update', app.app_key, '--pass-token-ttl', '5'], cwd, env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('pass_token_ttl: Too small');
    expect(invalid.stderr).toContain('(invalid_request)');
  });
});

describe.runIf(run)('gatehouse command finds the server started on its DATA_DIR', { timeout: LONG }, () => {
  it('talks to the port the server was started on, without --url or GATEHOUSE_URL', async () => {
    const work = tempDir();
    const dbEnv = await databaseEnv();
    // PORT=0: a port no default could guess. The command gets no URL at all.
    const server = await startServer(work, dbEnv);
    const file = join(work, '.gatehouse-data', 'server.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ url: server.url });
    const created = await gatehouse(['app', 'create', '--name', 'found', '--json'], work, dbEnv);
    const app = parsed(created);
    expect(created.stderr).not.toMatch(FALLBACK_NOTICE);
    expect(await authAs(server.url, app.app_key, app.app_secret)).toBe(PASSED);
    expect(await server.stop()).toBe(0);
    // Stopped: the file goes with it, so the next command does not chase a closed port.
    expect(existsSync(file)).toBe(false);
  });
});

describe.runIf(run)('gatehouse command from any folder', { timeout: LONG }, () => {
  it('finds the server from a folder below the one it was started in, and exports what the next lines need', async () => {
    const work = tempDir();
    const dbEnv = await databaseEnv();
    const server = await startServer(work, dbEnv);
    const below = join(work, 'src', 'deep');
    mkdirSync(below, { recursive: true });
    const exported = ok(
      await gatehouse(['app', 'create', '--name', 'below', '--test-mode', '--export'], below, dbEnv),
    );
    const vars = Object.fromEntries(
      [...exported.stdout.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    expect(Object.keys(vars)).toEqual(['APP_KEY', 'APP_SECRET', 'GATEHOUSE_URL']);
    expect(vars.GATEHOUSE_URL).toBe(server.url);
    expect(await authAs(server.url, vars.APP_KEY!, vars.APP_SECRET!)).toBe(PASSED);
    expect(exported.stderr).toContain(SECRET_WARNING);
    expect(existsSync(join(below, '.gatehouse-data'))).toBe(false);

    // Test mode wins over a forced challenge: the command says so, and says how to turn it off.
    const forced = ok(
      await gatehouse(['app', 'update', vars.APP_KEY!, '--force-challenge', 'slide'], below, dbEnv),
    );
    expect(forced.stderr).toContain('test mode is on');
    expect(forced.stderr).toContain('--no-test-mode');
    const off = ok(await gatehouse(['app', 'update', vars.APP_KEY!, '--no-test-mode'], below, dbEnv));
    expect(off.stderr).not.toContain('test mode is on');
    const shown = parsed(await gatehouse(['app', 'show', vars.APP_KEY!, '--json'], below, dbEnv));
    expect(shown).toMatchObject({
      test_mode: false,
      risk_policy: { invisible_below: 0, image_kinds: ['slide'] },
    });

    const both = await gatehouse(['app', 'create', '--name', 'x', '--export', '--json'], below, dbEnv);
    expect(both.code).toBe(2);
    expect(await server.stop()).toBe(0);
  });

  it('outside any checkout, with no server, says it found none and creates no database', async () => {
    const nowhere = tempDir();
    // Only the default address is left to try; something else on this machine may hold port 8080.
    const defaultClosed = await fetch('http://127.0.0.1:8080/').then(
      () => false,
      () => true,
    );
    for (const args of [
      ['app', 'list'],
      ['app', 'create', '--name', 'stray'],
    ]) {
      const result = await gatehouse(args, nowhere, {});
      expect(result.code).not.toBe(0);
      if (defaultClosed) {
        expect(result.stderr).toContain(
          'No Gatehouse server found: nothing answers at http://127.0.0.1:8080',
        );
        expect(result.stderr).toContain(`in ${nowhere} or any folder above`);
        expect(result.stderr).toContain('no database was opened or created');
      }
      expect(result.stderr).not.toMatch(FALLBACK_NOTICE);
    }
    expect(readdirSync(nowhere)).toEqual([]);
  });
});

describe.runIf(run)('secrets in the output', () => {
  it('never prints a secret except in the one create or rotate-secret that made it', () => {
    expect(results.length).toBeGreaterThan(40);
    const secrets = new Set(
      results.flatMap((r) => [...`${r.stdout}${r.stderr}`.matchAll(/sk_[\w-]{43}/g)].map((m) => m[0])),
    );
    expect(secrets.size).toBeGreaterThan(5);
    for (const secret of secrets) {
      const printedBy = results.filter((r) => `${r.stdout}${r.stderr}`.includes(secret));
      expect(printedBy, secret).toHaveLength(1);
      expect(['create', 'rotate-secret']).toContain(printedBy[0]!.args[1]);
    }
  });

  it('never prints the admin token', () => {
    const tokens = results.flatMap((r) =>
      r.args.filter((a, i) => r.args[i - 1] === '--admin-token' && a.length > 20),
    );
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) {
      for (const r of results) expect(`${r.stdout}${r.stderr}`).not.toContain(token);
    }
  });
});

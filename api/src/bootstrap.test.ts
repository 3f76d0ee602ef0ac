import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publicVerif } from '@cloudflare/privacypass-ts';
import { afterEach, describe, expect, it } from 'vitest';
import { REDIS_URL, redisAvailable } from '../test/harness.ts';
import { localAdminToken } from './bootstrap.ts';

describe('localAdminToken', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-admin-token-'));
    dirs.push(dir);
    return join(dir, 'data');
  };

  it('writes the token once, owner-only, and reads the same token back', () => {
    const dir = dataDir();
    const token = localAdminToken(dir);
    expect(localAdminToken(dir)).toBe(token);
    expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe(`${token}\n`);
    expect(statSync(join(dir, 'admin-token')).mode & 0o777).toBe(0o600);
  });

  // A token starting with "-" is read as an option by `gatehouse app list --admin-token TOKEN`
  // (CI once drew one); the prefix rules that out whatever the random bytes are.
  it('never starts with a dash and carries 32 random bytes', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => localAdminToken(dataDir())));
    expect(tokens.size).toBe(200);
    for (const token of tokens) expect(token).toMatch(/^at_[A-Za-z0-9_-]{43}$/);
  });
});

/*
 * Optional libraries load only where configured: every module loaded costs resident memory in each API
 * process. A fresh Node process boots the API from its sources and reports which of them it
 * resolved, watched by a module hook.
 */
const withRedis = await redisAvailable('the lazy loading of ioredis');

describe('bootstrap: libraries only some deployments use', () => {
  const BOOT = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { seen.add(specifier); return next(specifier, context); } });
    const { bootstrap } = await import(${JSON.stringify(join(import.meta.dirname, 'bootstrap.ts'))});
    const { loadConfig } = await import(${JSON.stringify(join(import.meta.dirname, 'config.ts'))});
    const runtime = await bootstrap(loadConfig());
    const ping = await runtime.offlineStore.ping().then(() => 'ok', (e) => String(e));
    const loaded = [...seen].filter((s) => s === 'ioredis' || s.startsWith('@cloudflare/'));
    console.log(JSON.stringify({ loaded, attestation: runtime.attestation !== undefined, ping }));
    await runtime.close();
  `;
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function boot(env: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-lazy-'));
    dirs.push(dir);
    const child = spawn(process.execPath, ['--input-type=module', '-e', BOOT], {
      env: { PATH: process.env.PATH, DATA_DIR: dir, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const [code] = await once(child, 'exit');
    expect(code, err).toBe(0);
    return JSON.parse(out.trim().split('\n').at(-1)!) as {
      loaded: string[];
      attestation: boolean;
      ping: string;
    };
  }

  it('loads neither ioredis nor the Privacy Pass libraries when neither is configured', async () => {
    expect(await boot({})).toEqual({ loaded: [], attestation: false, ping: 'ok' });
  }, 120_000);

  it.runIf(withRedis)(
    'loads them when REDIS_URL, STANDBY_STORE_URL and PRIVACY_PASS_ISSUERS are set, and uses them',
    async () => {
      const keys = await publicVerif.Issuer.generateKey(publicVerif.BlindRSAMode.PSS, {
        modulusLength: 2048,
        publicExponent: Uint8Array.from([1, 0, 1]),
      });
      const spki = Buffer.from(await crypto.subtle.exportKey('spki', keys.publicKey)).toString('base64');
      const result = await boot({
        REDIS_URL,
        STANDBY_STORE_URL: REDIS_URL,
        PRIVACY_PASS_ISSUERS: JSON.stringify([{ name: 'issuer.example', public_key: spki }]),
      });
      expect(result.loaded).toContain('ioredis');
      expect(result.loaded).toContain('@cloudflare/privacypass-ts');
      expect(result).toMatchObject({ attestation: true, ping: 'ok' });
    },
    120_000,
  );
});

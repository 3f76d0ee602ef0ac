import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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

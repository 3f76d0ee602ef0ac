import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveTarget } from './cli/target.ts';
import { readServerFile, SERVER_FILE, writeServerFile } from './server-file.ts';

const dirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-server-file-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('DATA_DIR/server.json', () => {
  it('names this process while it runs, and the command resolves to it before the default port', () => {
    const dir = dataDir();
    const remove = writeServerFile(dir, 'http://127.0.0.1:41234', () => {});
    expect(readServerFile(dir)).toMatchObject({ url: 'http://127.0.0.1:41234', pid: process.pid });
    const target = resolveTarget({}, { DATA_DIR: dir }, '/');
    expect(target).toMatchObject({ url: 'http://127.0.0.1:41234', fallbackAllowed: true });
    expect(target.urlSource).toBe(join(dir, SERVER_FILE));
    // GATEHOUSE_URL and --url still win.
    expect(resolveTarget({}, { DATA_DIR: dir, GATEHOUSE_URL: 'http://127.0.0.1:9' }, '/').url).toBe(
      'http://127.0.0.1:9',
    );
    expect(resolveTarget({ url: 'http://127.0.0.1:7' }, { DATA_DIR: dir }, '/').url).toBe(
      'http://127.0.0.1:7',
    );
    remove();
    expect(readServerFile(dir)).toBeUndefined();
    expect(resolveTarget({}, { DATA_DIR: dir }, '/').url).toBe('http://127.0.0.1:8080');
  });

  it('is ignored when the process it names is gone (a crash left it) or it is not JSON', () => {
    const dir = dataDir();
    // Beyond any pid_max: no such process.
    writeFileSync(join(dir, SERVER_FILE), JSON.stringify({ url: 'http://127.0.0.1:1', pid: 2 ** 30 }));
    expect(readServerFile(dir)).toBeUndefined();
    expect(resolveTarget({}, { DATA_DIR: dir }, '/').url).toBe('http://127.0.0.1:8080');
    writeFileSync(join(dir, SERVER_FILE), '{not json');
    expect(readServerFile(dir)).toBeUndefined();
  });

  it("leaves another server's file in place when this one stops", () => {
    const dir = dataDir();
    const remove = writeServerFile(dir, 'http://127.0.0.1:1111', () => {});
    writeServerFile(dir, 'http://127.0.0.1:2222', () => {});
    remove();
    expect(JSON.parse(readFileSync(join(dir, SERVER_FILE), 'utf8')).url).toBe('http://127.0.0.1:2222');
  });

  it('warns, and the server keeps running, when the folder cannot be written', () => {
    const warnings: unknown[] = [];
    const notAFolder = join(dataDir(), 'a-file');
    writeFileSync(notAFolder, '');
    const remove = writeServerFile(join(notAFolder, 'data'), 'http://127.0.0.1:1', (e) => warnings.push(e));
    expect(warnings).toHaveLength(1);
    expect(() => remove()).not.toThrow();
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './index.ts';

describe('embedded database lock', () => {
  it('refuses a second opener while the first holds the folder, and frees it on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-lock-'));
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(join(dir, 'gatehouse.lock'), String(sleeper.pid));
      await expect(openDatabase({ dataDir: dir })).rejects.toThrow(`in use by process ${sleeper.pid}`);
    } finally {
      sleeper.kill();
    }
    await new Promise((resolve) => sleeper.once('exit', resolve));
    // The owner is gone: its stale lock is taken over.
    const first = await openDatabase({ dataDir: dir });
    await first.close();
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  }, 60_000);
});

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * JSON lines are gathered in memory and written in batches: every line must still reach
 * stdout, whole and in order, whether the process ends by itself, by process.exit or after a flush, and
 * whatever the lines' sizes (many short ones, ones past a batch, multi-byte text).
 */
const LOGGING = join(import.meta.dirname, 'logging.ts');

function run(ending: 'natural' | 'exit' | 'flush-then-exit', count: number) {
  const script = `
    import { writeSync } from 'node:fs';
    import { createLogger } from ${JSON.stringify(LOGGING)};
    const logger = createLogger({ level: 'info', format: 'json' });
    for (let i = 0; i < ${count}; i++) {
      const size = ${ending === 'flush-then-exit' ? 3 : 'i % 97 === 0 ? 20000 : i % 7'};
      logger.info({ i, text: 'é'.repeat(size) + 'x' }, 'line ' + i);
    }
    ${ending === 'exit' ? 'process.exit(0);' : ''}
    ${ending === 'flush-then-exit' ? "logger.flush(() => { writeSync(1, JSON.stringify({ i: 'mark', msg: 'written past the logger' }) + '\\n'); logger.info({ i: 'last' }, 'after flush'); process.exit(0); });" : ''}
  `;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  expect(out.status, out.stderr).toBe(0);
  return out.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { i: number | string; text?: string; msg: string });
}

describe('JSON log lines', () => {
  for (const ending of ['natural', 'exit'] as const) {
    it(`all arrive, whole and in order (${ending})`, () => {
      const lines = run(ending, 3000);
      expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 3000 }, (_, i) => i));
      expect(lines[97]!.text).toBe(`${'é'.repeat(20000)}x`);
      expect(lines[5]!.text).toBe('ééééé' + 'x');
      expect(lines[2999]!.msg).toBe('line 2999');
    });
  }

  // (Short lines only: with a write already in progress, sonic-boom calls back before its buffer is out.)
  it('a flush hands over what was gathered, and lines after it still arrive at exit', () => {
    const lines = run('flush-then-exit', 10);
    // The mark is written to stdout directly once the flush is done: every line before it is out by then.
    expect(lines.map((l) => l.i)).toEqual([...Array.from({ length: 10 }, (_, i) => i), 'mark', 'last']);
  });
});

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const DOCKERFILE = resolve(import.meta.dirname, '../Dockerfile');

/**
 * The flags between `node` and the script in api/Dockerfile's exec-form CMD: the benches start the API as the
 * image does, so a flag changed there is measured without a second copy to keep in step.
 */
export function dockerfileNodeFlags(path = DOCKERFILE): string[] {
  const cmd = readFileSync(path, 'utf8')
    .split('\n')
    .find((line) => line.startsWith('CMD ['));
  const words = cmd ? (JSON.parse(cmd.slice(4)) as string[]) : [];
  if (words[0] !== 'node') throw new Error(`${path}: expected an exec-form CMD ["node", ...flags, script]`);
  return words.slice(1).filter((w) => w.startsWith('--'));
}

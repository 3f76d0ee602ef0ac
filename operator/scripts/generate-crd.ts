/**
 * Writes operator/config/crd/bases/gatehouse.dev_apps.yaml from the TypeScript schema.
 * Usage: npm run -w @gatehouse/operator generate   (or: npx node operator/scripts/generate-crd.ts)
 * `--check` writes nothing and exits 1 when the committed file differs (for CI).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_FILE, renderCrdYaml } from '../src/api/v1alpha1/crd.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const file = join(root, CRD_FILE);
const wanted = renderCrdYaml();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {}
  if (current !== wanted) {
    console.error(`${CRD_FILE} is out of date: run npm run -w @gatehouse/operator generate`);
    process.exit(1);
  }
  console.log(`${CRD_FILE} is up to date`);
} else {
  writeFileSync(file, wanted);
  console.log(`wrote ${CRD_FILE}`);
}

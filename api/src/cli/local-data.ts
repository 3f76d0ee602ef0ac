import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseEnv } from 'node:util';

/** The data folder a server started without DATA_DIR uses, relative to the folder it was started in. */
export const DEFAULT_DATA_DIR = '.gatehouse-data';

/** The data folder the command works with, and how it was found. */
export interface LocalData {
  /** DATA_DIR, absolute. */
  dataDir: string;
  /**
   * Whether someone named this folder (DATA_DIR in the shell or in the checkout's .env): only then may the
   * command create a database in it. A folder found by looking around is used only if it already holds one.
   */
  named: boolean;
  /** Where relative paths of the settings (PGLITE_DIR) are taken from: the folder the server starts in. */
  baseDir: string;
  /** The checkout's .env, when the folder was found through a checkout; the shell's variables win over it. */
  envFile: Record<string, string>;
}

/**
 * Finds the data folder of the server this command belongs with, from any folder: DATA_DIR when set; else,
 * from the working folder upwards, the first Gatehouse checkout (its .env's DATA_DIR, else its
 * .gatehouse-data, as `npm start` there uses) or the first `.gatehouse-data` folder. Undefined when there is
 * none: the command then only talks to an API and never opens a database.
 */
export function findLocalData(env: NodeJS.ProcessEnv, cwd: string): LocalData | undefined {
  if (env.DATA_DIR) return { dataDir: resolve(cwd, env.DATA_DIR), named: true, baseDir: cwd, envFile: {} };
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (isCheckout(dir)) {
      const envFile = readEnvFile(join(dir, '.env'));
      const named = Boolean(envFile.DATA_DIR);
      return { dataDir: resolve(dir, envFile.DATA_DIR || DEFAULT_DATA_DIR), named, baseDir: dir, envFile };
    }
    if (isFolder(join(dir, DEFAULT_DATA_DIR))) {
      return { dataDir: join(dir, DEFAULT_DATA_DIR), named: false, baseDir: dir, envFile: {} };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** A folder whose package.json is the Gatehouse monorepo's, where `npm start` runs. */
function isCheckout(dir: string): boolean {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
    return pkg.name === 'gatehouse';
  } catch {
    return false;
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The variables of a dotenv file, as Node's own --env-file reads them; none when there is no file. */
export function readEnvFile(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  return parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
}

import fs from 'node:fs';
import { join, resolve, sep } from 'node:path';

/**
 * Keeps a folder's contents private to the process's user: folders 0700, files 0600, now and for every
 * file created in it later. Needed for the embedded database: PGlite's file system layer (Emscripten's
 * NODEFS) creates every file, WAL segments included, and then chmods it to 0666 explicitly, which no
 * umask can prevent, so nearly every file of a data folder would be world-readable and world-writable, and
 * the master token key lives in one of its tables.
 *
 * How: 1. the folder is created (or tightened) to 0700, 2. everything already in it is tightened (data
 * written by an earlier version), 3. Node's synchronous `fs` calls NODEFS makes (mkdir, open and
 * writeFile with a mode, chmod, fchmod) have the group and other bits stripped from their mode when the
 * path lies in a protected folder; other paths are untouched.
 */
const roots = new Set<string>();
/** File descriptors opened inside a protected folder, so fchmod on them is clamped too. */
const privateFds = new Set<number>();
let installed = false;

export function protectFolder(dir: string): void {
  const root = resolve(dir);
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  roots.add(root);
  install();
  tighten(root);
}

/**
 * Creates `dir` (0700) or takes group and other access away from it; its contents are left as they are.
 * Returns false, instead of throwing, when the folder is not ours to change (a volume mounted by root):
 * the caller warns, and what it writes there is 0600 all the same.
 */
export function privateFolder(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if ((fs.statSync(dir).mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
    return true;
  } catch {
    return false;
  }
}

/** Whether `path` lies in a protected folder. */
export function isProtected(path: fs.PathLike): boolean {
  if (typeof path !== 'string' && !(path instanceof URL) && !Buffer.isBuffer(path)) return false;
  const abs = resolve(path instanceof URL ? path.pathname : path.toString());
  for (const root of roots) if (abs === root || abs.startsWith(root + sep)) return true;
  return false;
}

const clamp = (mode: fs.Mode | undefined): fs.Mode | undefined =>
  typeof mode === 'number'
    ? mode & ~0o077
    : typeof mode === 'string'
      ? Number.parseInt(mode, 8) & ~0o077
      : mode;

function tighten(path: string): void {
  const stat = fs.lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o700) chmodIfOurs(path, 0o700);
    for (const name of fs.readdirSync(path)) tighten(join(path, name));
  } else if ((stat.mode & 0o077) !== 0) {
    chmodIfOurs(path, stat.mode & 0o700 & ~0o111);
  }
}

/** A folder mounted by root (a volume) cannot be changed by us; what we create inside it still is. */
function chmodIfOurs(path: string, mode: number): void {
  try {
    fs.chmodSync(path, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  const original = {
    chmodSync: fs.chmodSync,
    fchmodSync: fs.fchmodSync,
    mkdirSync: fs.mkdirSync,
    openSync: fs.openSync,
    closeSync: fs.closeSync,
    writeFileSync: fs.writeFileSync,
  };
  fs.chmodSync = (path, mode) => original.chmodSync(path, isProtected(path) ? clamp(mode)! : mode);
  fs.fchmodSync = (fd, mode) => original.fchmodSync(fd, privateFds.has(fd) ? clamp(mode)! : mode);
  fs.mkdirSync = ((path: fs.PathLike, options?: fs.Mode | fs.MakeDirectoryOptions | null) => {
    if (!isProtected(path)) return original.mkdirSync(path, options as fs.MakeDirectoryOptions);
    const opts = typeof options === 'object' && options !== null ? options : { mode: options ?? 0o777 };
    return original.mkdirSync(path, { ...opts, mode: clamp(opts.mode ?? 0o777) } as fs.MakeDirectoryOptions);
  }) as typeof fs.mkdirSync;
  fs.openSync = (path, flags, mode) => {
    if (!isProtected(path)) return original.openSync(path, flags, mode);
    const fd = original.openSync(path, flags, clamp(mode ?? 0o666));
    privateFds.add(fd);
    return fd;
  };
  fs.closeSync = (fd) => {
    privateFds.delete(fd);
    original.closeSync(fd);
  };
  fs.writeFileSync = ((
    file: fs.PathOrFileDescriptor,
    data: string | NodeJS.ArrayBufferView,
    options?: fs.WriteFileOptions,
  ) => {
    if (typeof file === 'number' || !isProtected(file)) return original.writeFileSync(file, data, options);
    const opts =
      typeof options === 'object' && options !== null ? options : { encoding: options ?? undefined };
    return original.writeFileSync(file, data, { ...opts, mode: clamp(opts.mode ?? 0o666) });
  }) as typeof fs.writeFileSync;
}

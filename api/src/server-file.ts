import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DATA_DIR/server.json says where the API using this data folder listens, so that the `gatehouse`
 * command run beside it finds the port it was started on (PORT=0 included) without being told.
 * Written when the server listens, removed when it stops; a file left by a crash names a process that
 * no longer runs, and readers ignore it.
 */
export const SERVER_FILE = 'server.json';

export interface ServerFile {
  url: string;
  pid: number;
  started_at: string;
}

/**
 * Writes the file atomically (a reader never sees half of it); returns a remover that only removes our
 * own. A folder that cannot be written (a read-only container) costs only the discovery: `warn` says so.
 */
export function writeServerFile(dataDir: string, url: string, warn: (error: unknown) => void): () => void {
  const file = join(dataDir, SERVER_FILE);
  const content: ServerFile = { url, pid: process.pid, started_at: new Date().toISOString() };
  try {
    mkdirSync(dataDir, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(content)}\n`, { mode: 0o644 });
    renameSync(temp, file);
  } catch (error) {
    warn(error);
    return () => {};
  }
  return () => {
    const current = readServerFile(dataDir, { checkAlive: false });
    // Another server may have started on the same folder (a shared PostgreSQL) since: leave its file.
    if (current?.pid === content.pid && current.url === content.url) rmSync(file, { force: true });
  };
}

/** The file's content when it is well formed and (unless told otherwise) its process still runs. */
export function readServerFile(dataDir: string, options = { checkAlive: true }): ServerFile | undefined {
  let parsed: Partial<ServerFile>;
  try {
    parsed = JSON.parse(readFileSync(join(dataDir, SERVER_FILE), 'utf8')) as Partial<ServerFile>;
  } catch {
    return undefined;
  }
  if (typeof parsed.url !== 'string' || !Number.isInteger(parsed.pid)) return undefined;
  if (options.checkAlive && !alive(parsed.pid!)) return undefined;
  return parsed as ServerFile;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

import { AdminClient, ApiUnreachable } from './admin-client.ts';
import type { AppsBackend } from './apps-backend.ts';
import type { CliContext } from './command.ts';
import type { Target } from './target.ts';

/**
 * Runs `use` against the admin API. When that API is on this machine and refuses the connection (the
 * server is not running, so nothing was sent), runs it again on the database itself, saying so on stderr:
 * only a database that exists or was named (Target.fallbackAllowed), never a new one found by chance.
 */
export async function withApps<T>(
  ctx: CliContext,
  target: Target,
  use: (apps: AppsBackend) => Promise<T>,
  /** Called when the answer comes from the database, not from an API. */
  onDirect: () => void = () => {},
): Promise<T> {
  try {
    return await use(new AdminClient(target));
  } catch (err) {
    if (!(err instanceof ApiUnreachable && err.refused && target.fallbackAllowed)) throw err;
  }
  // Loaded only here: the HTTP path never pays for the database drivers.
  const { openDirectBackend } = await import('./direct-backend.ts');
  const direct = await openDirectBackend(target);
  onDirect();
  ctx.err(`gatehouse: no API is running at ${target.url}; using ${direct.description} directly.\n`);
  try {
    return await use(direct);
  } finally {
    await direct.close();
  }
}

import type { describeApp } from '../apps/repository.ts';
import { AdminClient, ApiUnreachable } from './admin-client.ts';
import type { CliContext } from './command.ts';
import type { Target } from './target.ts';

/** An app as the admin API shows it: never its secret. */
export type AppView = ReturnType<typeof describeApp>;
/** The answer to create and rotate-secret: the only place a secret ever appears. */
export type AppWithSecret = AppView & { app_secret: string };

/** The admin operations, answered by the admin API or, as a fallback, by the database itself. */
export interface AppsBackend {
  list(): Promise<{ apps: AppView[] }>;
  show(appKey: string): Promise<AppView>;
  create(settings: Record<string, unknown>): Promise<AppWithSecret>;
  update(appKey: string, patch: Record<string, unknown>): Promise<AppView>;
  rotateSecret(appKey: string, graceSeconds: number | undefined): Promise<AppWithSecret>;
  rotateKey(appKey: string, graceSeconds: number | undefined): Promise<AppView>;
  setDisabled(appKey: string, disabled: boolean): Promise<AppView>;
}

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

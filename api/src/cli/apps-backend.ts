import type { describeApp } from '../apps/repository.ts';

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

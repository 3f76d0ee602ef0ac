import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppRepository } from '../apps/repository.ts';
import { verifyAppSecret } from '../apps/secrets.ts';
import { appSettings } from '../apps/settings.ts';

export const DEMO_APP_NAME = 'demo';
export const DEMO_APP_FILE = 'demo-app.json';

export interface DemoCredentials {
  appKey: string;
  appSecret: string;
  /** Whether the app was created just now (else reused from DATA_DIR/demo-app.json). */
  created: boolean;
}

/**
 * The demo site's app: reused when DATA_DIR/demo-app.json names an app that exists and whose secret still
 * matches, created (name `demo`, default settings) otherwise. The file holds the secret: mode 0600.
 */
export async function ensureDemoApp(apps: AppRepository, dataDir: string): Promise<DemoCredentials> {
  const file = join(dataDir, DEMO_APP_FILE);
  const saved = readSaved(file);
  if (saved) {
    const app = await apps.findByKey(saved.app_key);
    if (app && verifyAppSecret(app, saved.app_secret)) {
      return { appKey: saved.app_key, appSecret: saved.app_secret, created: false };
    }
  }
  const { app, secret } = await apps.create(appSettings.parse({ name: DEMO_APP_NAME }));
  mkdirSync(dataDir, { recursive: true });
  const body = { app_key: app.appKey, app_secret: secret, name: DEMO_APP_NAME, created_at: app.createdAt };
  writeFileSync(file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync's mode applies only to a new file: a replaced one keeps its old mode unless set here.
  chmodSync(file, 0o600);
  return { appKey: app.appKey, appSecret: secret, created: true };
}

function readSaved(file: string): { app_key: string; app_secret: string } | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    if (typeof parsed.app_key === 'string' && typeof parsed.app_secret === 'string') {
      return { app_key: parsed.app_key, app_secret: parsed.app_secret };
    }
  } catch {}
  return null;
}

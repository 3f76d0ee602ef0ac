import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type DatabaseHandle, openDatabase } from '@gatehouse/core/db';
import { parseOrThrow } from '@gatehouse/core/http';
import { z } from 'zod';
import { AppRepository, describeApp } from '../apps/repository.ts';
import { appSettings, appSettingsPatch } from '../apps/settings.ts';
import { loadConfig } from '../config.ts';
import { appKeyParam, rotateBody } from '../routes/admin.ts';
import type { AppsBackend, AppView, AppWithSecret } from './apps-backend.ts';
import { CommandError } from './errors.ts';
import type { Target } from './target.ts';

/**
 * The admin operations on the database itself, for when no API runs: the same repository, schemas and
 * view as the admin API, so both answer alike.
 */
export class DirectBackend implements AppsBackend {
  readonly #apps: AppRepository;
  readonly #database: DatabaseHandle;
  /** What was opened, for the stderr notice; never a password. */
  readonly description: string;

  constructor(database: DatabaseHandle, description: string) {
    this.#database = database;
    this.#apps = new AppRepository(database.db);
    this.description = description;
  }

  async list(): Promise<{ apps: AppView[] }> {
    return { apps: (await this.#apps.list()).map(describeApp) };
  }

  async show(appKey: string): Promise<AppView> {
    return describeApp(await this.#apps.require(key(appKey)));
  }

  async create(settings: Record<string, unknown>): Promise<AppWithSecret> {
    const { app, secret } = await this.#apps.create(parseOrThrow(appSettings.strict(), settings));
    return { ...describeApp(app), app_secret: secret };
  }

  async update(appKey: string, patch: Record<string, unknown>): Promise<AppView> {
    const valid = parseOrThrow(appSettingsPatch, patch);
    return describeApp(await this.#apps.update(key(appKey), valid));
  }

  async rotateSecret(appKey: string, graceSeconds: number | undefined): Promise<AppWithSecret> {
    const body = parseOrThrow(rotateBody, graceSeconds === undefined ? {} : { grace_seconds: graceSeconds });
    const { app, secret } = await this.#apps.rotateSecret(key(appKey), body.grace_seconds);
    return { ...describeApp(app), app_secret: secret };
  }

  async rotateKey(appKey: string, graceSeconds: number | undefined): Promise<AppView> {
    const body = parseOrThrow(rotateBody, graceSeconds === undefined ? {} : { grace_seconds: graceSeconds });
    return describeApp(await this.#apps.rotateKey(key(appKey), body.grace_seconds));
  }

  async setDisabled(appKey: string, disabled: boolean): Promise<AppView> {
    return describeApp(await this.#apps.setDisabled(key(appKey), disabled));
  }

  close(): Promise<void> {
    return this.#database.close();
  }
}

function key(raw: string): string {
  return parseOrThrow(z.object({ appKey: appKeyParam }), { appKey: raw }).appKey;
}

/**
 * Opens the database the server would open (DATABASE_URL, else the embedded PGlite in DATA_DIR/pgdata)
 * and runs the migrations. Refuses an embedded database another process holds open: PGlite is
 * single-process, and two writers would corrupt it.
 */
export async function openDirectBackend(target: Target): Promise<DirectBackend> {
  const { GATEHOUSE_ADMIN_TOKEN: _unused, ...env } = target.env;
  const config = loadConfig(target.dataDir ? { ...env, DATA_DIR: target.dataDir } : env);
  if (config.databaseUrl) {
    const database = await openDatabase({ url: config.databaseUrl, poolMax: 1 });
    return migrated(database, `the database at ${redact(config.databaseUrl)}`);
  }
  if (config.pgliteDir.startsWith('memory://')) {
    throw new CommandError(
      'PGLITE_DIR=memory:// keeps the database inside the server process: start the server and retry.',
    );
  }
  const dir = resolve(target.baseDir, config.pgliteDir);
  if (existsSync(join(dir, 'postmaster.pid'))) {
    throw new CommandError(
      `The embedded database in ${dir} is open in another process (postmaster.pid exists), but no API ` +
        `answers at ${target.url}. If the server runs on another address, pass --url. If it crashed, ` +
        'start it and stop it once (or delete that postmaster.pid) and retry.',
    );
  }
  return migrated(await openDatabase({ dataDir: dir }), `the embedded database in ${dir}`);
}

async function migrated(database: DatabaseHandle, description: string): Promise<DirectBackend> {
  try {
    await database.migrate();
  } catch (err) {
    await database.close();
    throw err;
  }
  return new DirectBackend(database, description);
}

/** host:port/database of a connection URL, without user or password. */
function redact(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

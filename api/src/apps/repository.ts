import { randomUUID } from 'node:crypto';
import type { Database } from '@gatehouse/core/db';
import { type App, apps, usageHourly } from '@gatehouse/core/db/schema';
import { GatehouseError } from '@gatehouse/core/errors';
import { asc, eq, or, sql } from 'drizzle-orm';
import { effectivePlan } from './plans.ts';
import { newAppKey, newAppSecret } from './secrets.ts';
import type { AppSettings, AppSettingsPatch } from './settings.ts';

/** How long a looked-up app is trusted before reading it again; writes through this instance clear it. */
const CACHE_TTL_MS = 2_000;

/** Apps: creation, look-up by public key (cached briefly, it is on every request), rotation, disabling. */
export class AppRepository {
  readonly #db: Database;
  readonly #cache = new Map<string, { app: App | null; at: number }>();

  constructor(db: Database) {
    this.#db = db;
  }

  async create(settings: AppSettings): Promise<{ app: App; secret: string }> {
    const { secret, hash } = newAppSecret();
    const [app] = await this.#db
      .insert(apps)
      .values({
        ...toColumns(settings),
        id: randomUUID(),
        appKey: newAppKey(),
        secretHash: hash,
        name: settings.name,
      })
      .returning();
    return { app: app!, secret };
  }

  async list(): Promise<App[]> {
    return this.#db.select().from(apps).orderBy(asc(apps.createdAt));
  }

  /**
   * One page of apps in creation order, `limit` at most, after the app whose id is `after` (the last of
   * the previous page); `next` is this page's last app when more may follow, and undefined `apps` means
   * `after` names no app. Ties in creation time are broken by id, and the position is compared in the
   * database at its own precision (a JavaScript Date would drop microseconds and show apps twice), so
   * every app is on exactly one page even while apps are created between pages.
   */
  async page(limit: number, after?: string): Promise<{ apps: App[]; next?: App } | undefined> {
    if (after !== undefined) {
      const [anchor] = await this.#db.select({ id: apps.id }).from(apps).where(eq(apps.id, after));
      if (!anchor) return undefined;
    }
    const rows = await this.#db
      .select()
      .from(apps)
      .where(
        after === undefined
          ? undefined
          : sql`(${apps.createdAt}, ${apps.id}) > (select a.created_at, a.id from apps a where a.id = ${after})`,
      )
      .orderBy(asc(apps.createdAt), asc(apps.id))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    return rows.length > limit ? { apps: page, next: page[page.length - 1] } : { apps: page };
  }

  /**
   * The app this public key names, or null: its current key, or the key it had before a rotation while
   * that rotation's grace lasts (checked on every call, cached or not). Served from a short cache.
   */
  async findByKey(appKey: string): Promise<App | null> {
    const cached = this.cachedByKey(appKey);
    if (cached !== undefined) return cached;
    const rows = await this.#db
      .select()
      .from(apps)
      .where(or(eq(apps.appKey, appKey), eq(apps.previousAppKey, appKey)))
      .limit(2);
    const app = rows.find((a) => a.appKey === appKey) ?? rows[0] ?? null;
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(appKey, { app, at: Date.now() });
    return keyNames(app, appKey);
  }

  /**
   * What `findByKey` answers from its cache, synchronously (no promise, no await on the hot path of an
   * init): the app or null while the cached look-up is fresh, undefined when it must be read.
   */
  cachedByKey(appKey: string): App | null | undefined {
    const hit = this.#cache.get(appKey);
    return hit && Date.now() - hit.at < CACHE_TTL_MS ? keyNames(hit.app, appKey) : undefined;
  }

  async findById(id: string): Promise<App | null> {
    const [app] = await this.#db.select().from(apps).where(eq(apps.id, id)).limit(1);
    return app ?? null;
  }

  async require(appKey: string): Promise<App> {
    this.#cache.delete(appKey);
    const app = await this.findByKey(appKey);
    if (!app) throw new GatehouseError('not_found', `No app with key ${appKey}.`);
    return app;
  }

  async update(appKey: string, patch: AppSettingsPatch): Promise<App> {
    return this.#write(appKey, toColumns(patch));
  }

  /**
   * Issues a new public key; the old one keeps naming the app for `graceSeconds` so pages and servers
   * can be rolled. Tokens are bound to the app's id, not to a key, so those already issued stay valid.
   * A second rotation inside the grace period ends the first one's grace (only one previous key).
   */
  async rotateKey(appKey: string, graceSeconds: number): Promise<App> {
    const current = await this.require(appKey);
    if (current.managedBy) {
      throw new GatehouseError(
        'invalid_request',
        `This app is managed by ${current.managedBy.kind} ${current.managedBy.namespace}/${current.managedBy.name}, which holds its key: rotate it there.`,
      );
    }
    this.#cache.delete(current.appKey);
    if (current.previousAppKey) this.#cache.delete(current.previousAppKey);
    const app = await this.#write(appKey, {
      appKey: newAppKey(),
      previousAppKey: graceSeconds > 0 ? current.appKey : null,
      previousAppKeyExpiresAt: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : null,
    });
    // The console's usage history is kept per key: it follows the app to its new key. Should a row of the
    // new key already exist (traffic under it flushed in between), the rows stay under the previous key,
    // which the console reads too (previousAppKey is kept past the grace, until the next rotation).
    await this.#db
      .update(usageHourly)
      .set({ appKey: app.appKey })
      .where(eq(usageHourly.appKey, current.appKey))
      .catch(() => undefined);
    return app;
  }

  /**
   * Issues a new secret; the old one keeps working for `graceSeconds` so integrators can roll their
   * deployments. A second rotation inside the grace period ends the first one's grace.
   */
  async rotateSecret(appKey: string, graceSeconds: number): Promise<{ app: App; secret: string }> {
    const current = await this.require(appKey);
    const { secret, hash } = newAppSecret();
    const app = await this.#write(appKey, {
      secretHash: hash,
      previousSecretHash: graceSeconds > 0 ? current.secretHash : null,
      previousSecretExpiresAt: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : null,
    });
    return { app, secret };
  }

  async setDisabled(appKey: string, disabled: boolean): Promise<App> {
    return this.#write(appKey, { disabledAt: disabled ? new Date() : null });
  }

  /** Writes the app this key names (current key, or previous one in its grace), by its id. */
  async #write(appKey: string, values: Partial<App>): Promise<App> {
    const found = await this.require(appKey);
    this.#cache.delete(appKey);
    const [app] = await this.#db
      .update(apps)
      .set({ ...values, updatedAt: sql`now()` })
      .where(eq(apps.id, found.id))
      .returning();
    if (!app) throw new GatehouseError('not_found', `No app with key ${appKey}.`);
    this.#cache.delete(app.appKey);
    return app;
  }
}

function toColumns(s: Partial<AppSettings>): Partial<App> {
  const out: Partial<App> = {};
  if (s.name !== undefined) out.name = s.name;
  if (s.plan !== undefined) out.plan = s.plan;
  if (s.monthly_quota !== undefined) out.monthlyQuota = s.monthly_quota;
  if (s.overage_allowed !== undefined) out.overageAllowed = s.overage_allowed;
  if (s.subscription_expires_at !== undefined) {
    out.subscriptionExpiresAt =
      s.subscription_expires_at === null ? null : new Date(s.subscription_expires_at);
  }
  if (s.server_token_required !== undefined) out.serverTokenRequired = s.server_token_required;
  if (s.test_mode !== undefined) out.testMode = s.test_mode;
  if (s.pass_token_ttl !== undefined) out.passTokenTtl = s.pass_token_ttl;
  if (s.client_ip_policy !== undefined) out.clientIpPolicy = s.client_ip_policy;
  if (s.risk_policy !== undefined) out.riskPolicy = s.risk_policy;
  if (s.allowed_domains !== undefined) out.allowedDomains = s.allowed_domains;
  if (s.managed_by !== undefined) out.managedBy = s.managed_by;
  return out;
}

/** Whether the key replaced by the last rotation still names the app. */
function inGrace(app: App, now = new Date()): boolean {
  return (
    app.previousAppKey !== null && app.previousAppKeyExpiresAt !== null && app.previousAppKeyExpiresAt > now
  );
}

/** Whether `appKey` names this app now: its current key, or its previous key during the grace period. */
export function keyNamesApp(app: App, appKey: string): boolean {
  return keyNames(app, appKey) !== null;
}

/** The app if `appKey` names it now: its current key, or its previous key during the grace period. */
function keyNames(app: App | null, appKey: string): App | null {
  if (!app) return null;
  return app.appKey === appKey || (app.previousAppKey === appKey && inGrace(app)) ? app : null;
}

/** The public view of an app: never the secret or its hash. */
export function describeApp(app: App) {
  const plan = effectivePlan(app);
  return {
    app_key: app.appKey,
    name: app.name,
    plan: app.plan,
    effective_plan: plan.name,
    monthly_quota: plan.monthlyQuota,
    overage_allowed: plan.overageAllowed,
    subscription_expires_at: readableDate(app.subscriptionExpiresAt),
    server_token_required: app.serverTokenRequired,
    test_mode: app.testMode,
    pass_token_ttl: app.passTokenTtl,
    client_ip_policy: app.clientIpPolicy,
    risk_policy: app.riskPolicy,
    allowed_domains: app.allowedDomains,
    managed_by: app.managedBy ?? null,
    disabled: app.disabledAt !== null,
    secret_rotation_grace_until: readableDate(app.previousSecretExpiresAt),
    previous_app_key: inGrace(app) ? app.previousAppKey : null,
    key_rotation_grace_until: inGrace(app) ? readableDate(app.previousAppKeyExpiresAt) : null,
    created_at: app.createdAt.toISOString(),
  };
}

/**
 * A stored date as RFC 3339, or null when the driver could not read it back (a row written before the
 * admin API bounded dates): one such row must not make every listing fail. effectivePlan() treats an
 * unreadable subscription end as lapsed, so the free plan applies until an operator sets a real date.
 */
function readableDate(date: Date | null): string | null {
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}

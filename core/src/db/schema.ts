import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/*
 * CockroachDB-compatible by construction: random text keys (no SERIAL), plain types, one DDL statement
 * per migration step. Timestamps are timestamptz; every expiry check uses the database clock or a value
 * sealed into a token, never a mix.
 */

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const apps = pgTable(
  'apps',
  {
    id: text('id').primaryKey(),
    appKey: text('app_key').notNull().unique(),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull(),
    previousSecretHash: text('previous_secret_hash'),
    previousSecretExpiresAt: tstz('previous_secret_expires_at'),
    /** The key replaced by the last key rotation: it keeps naming this app until previousAppKeyExpiresAt. */
    previousAppKey: text('previous_app_key').unique(),
    previousAppKeyExpiresAt: tstz('previous_app_key_expires_at'),
    plan: text('plan').notNull().default('free'),
    /** Overrides the plan's monthly quota (custom quotas). */
    monthlyQuota: integer('monthly_quota'),
    /** Overrides the plan's overage rule. */
    overageAllowed: boolean('overage_allowed'),
    subscriptionExpiresAt: tstz('subscription_expires_at'),
    serverTokenRequired: boolean('server_token_required').notNull().default(false),
    testMode: boolean('test_mode').notNull().default(false),
    passTokenTtl: integer('pass_token_ttl').notNull().default(300),
    clientIpPolicy: text('client_ip_policy').notNull().default('report'),
    riskPolicy: jsonb('risk_policy').notNull().default({}),
    allowedDomains: jsonb('allowed_domains').$type<string[]>().notNull().default([]),
    /**
     * Set when the app is declared elsewhere and managed there, e.g. by the Kubernetes operator from an
     * `App` custom resource: {kind, namespace, name}. The console shows such apps read-only.
     */
    managedBy: jsonb('managed_by').$type<{ kind: string; namespace: string; name: string }>(),
    disabledAt: tstz('disabled_at'),
    createdAt: tstz('created_at').notNull().defaultNow(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  // The siteverify-compatible endpoints receive only a secret: the app is found by the secret's hash
  // (an indexed look-up, never a scan), then the secret is confirmed in constant time.
  (t) => [
    index('apps_secret_hash_idx').on(t.secretHash),
    index('apps_previous_secret_hash_idx').on(t.previousSecretHash),
  ],
);

export const passTokens = pgTable(
  'pass_tokens',
  {
    id: text('id').primaryKey(),
    appId: text('app_id').notNull(),
    challengeId: text('challenge_id').notNull(),
    action: text('action').notNull(),
    uid: text('uid'),
    captchaArgs: jsonb('captcha_args').notNull(),
    issuedAt: tstz('issued_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    consumedAt: tstz('consumed_at'),
    /** Set at consumption: a retry with the same key gets the same verdict instead of token_already_used. */
    idempotencyKey: text('idempotency_key'),
    /** Customer data the page attached at render (Turnstile's `cdata`), echoed by siteverify. */
    cdata: text('cdata'),
  },
  (t) => [index('pass_tokens_expires_at_idx').on(t.expiresAt)],
);

export const serverTokens = pgTable(
  'server_tokens',
  {
    id: text('id').primaryKey(),
    appId: text('app_id').notNull(),
    action: text('action').notNull(),
    maxUses: integer('max_uses').notNull(),
    uses: integer('uses').notNull().default(0),
    bindIp: text('bind_ip'),
    bindDeviceId: text('bind_device_id'),
    bindFingerprint: text('bind_fingerprint'),
    bindUid: text('bind_uid'),
    issuedAt: tstz('issued_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
  },
  (t) => [index('server_tokens_expires_at_idx').on(t.expiresAt)],
);

/**
 * Challenges are sealed and stateless until their answer arrives; this row exists from the first
 * submission on, to bound wrong answers and to let a challenge be solved once.
 */
export const challengeAttempts = pgTable(
  'challenge_attempts',
  {
    id: text('id').primaryKey(),
    appId: text('app_id').notNull(),
    attempts: integer('attempts').notNull().default(0),
    solvedAt: tstz('solved_at'),
    expiresAt: tstz('expires_at').notNull(),
  },
  (t) => [index('challenge_attempts_expires_at_idx').on(t.expiresAt)],
);

/** Challenges counted per app and calendar month (UTC), for quotas. */
export const appUsage = pgTable(
  'app_usage',
  {
    appId: text('app_id').notNull(),
    period: text('period').notNull(),
    challenges: integer('challenges').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.appId, t.period] })],
);

/**
 * Usage and outcomes per app and hour, for the console's charts: counted in memory on the request path
 * and added here in batches every few seconds (api/src/console/usage.ts), never computed from token rows.
 * `metric` is a short name such as `challenge.image`, `submit.failed`, `validate.valid`.
 */
export const usageHourly = pgTable(
  'usage_hourly',
  {
    appKey: text('app_key').notNull(),
    hour: tstz('hour').notNull(),
    metric: text('metric').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.appKey, t.hour, t.metric] })],
);

/** Deployment-wide values generated once and shared by every instance (the token master key). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: tstz('created_at').notNull().default(sql`now()`),
});

/**
 * The standby keyring (core/src/standby-keys.ts): one `offline_` signing key per standby region, random,
 * stored sealed under a key derived from the master key (a database dump alone does not reveal it).
 */
export const standbyKeys = pgTable(
  'standby_keys',
  {
    kid: text('kid').primaryKey(),
    region: text('region').notNull(),
    sealedKey: text('sealed_key').notNull(),
    status: text('status').notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
    retiredAt: tstz('retired_at'),
    revokedAt: tstz('revoked_at'),
  },
  (t) => [index('standby_keys_region_idx').on(t.region)],
);

/**
 * Console sign-in sessions, shared by every API instance. The row's key is an HMAC of the session id (the
 * cookie's value) under a key derived from the admin token: a database dump holds no usable id, and a new
 * admin token leaves every row unreachable (the sessions it signed are revoked by that change alone).
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    createdAt: tstz('created_at').notNull(),
    lastSeenAt: tstz('last_seen_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
  },
  (t) => [index('console_sessions_expires_idx').on(t.expiresAt)],
);

export type App = typeof apps.$inferSelect;
export type NewApp = typeof apps.$inferInsert;
export type PassTokenRow = typeof passTokens.$inferSelect;
export type ServerTokenRow = typeof serverTokens.$inferSelect;
export type StandbyKeyRow = typeof standbyKeys.$inferSelect;

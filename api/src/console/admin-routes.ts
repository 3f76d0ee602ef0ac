import { appUsage } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { standbyStoreState } from '@gatehouse/standby/store-check';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { adminAuth, bodyErrors, counts, dateTime, errors, ok } from '../answers.ts';
import { describeApp } from '../apps/repository.ts';
import { quotaPeriod } from '../quotas/monthly-quota.ts';
import { RiskEngine } from '../risk/engine.ts';
import { resolvePolicy, riskPolicy } from '../risk/policy.ts';
import { Reputation } from '../risk/reputation.ts';
import { clientSignals } from '../risk/signals.ts';
import { MemoryVelocity } from '../risk/velocity.ts';
import { type Route, route } from '../route-table.ts';
import { adminGuard, appKeyParam } from '../routes/admin.ts';

/** POST /admin/v1/risk/preview: a visitor described by what the server would see of them. */
export const previewBody = z
  .object({
    app_key: appKeyParam.optional(),
    /** A policy to try instead of the app's stored one (the console previews before saving). */
    risk_policy: z.record(z.string(), z.unknown()).optional(),
    ip: z.union([z.ipv4(), z.ipv6()]).default('203.0.113.7'),
    user_agent: z.string().max(1024).default(''),
    accept_language: z.string().max(256).default(''),
    platform: z.enum(['web', 'android', 'ios', 'desktop']).default('web'),
    signals: clientSignals.optional(),
    server_token: z.boolean().default(false),
    attested: z.boolean().default(false),
  })
  .strict();

const usageQuery = z
  .object({
    hours: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 31)
      .default(24)
      .meta({ description: 'Hours back from now' }),
  })
  .strict();
const decisionsQuery = z
  .object({
    app_key: appKeyParam.optional().meta({ description: 'Only this app' }),
    limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: 'At most this many' }),
  })
  .strict();

const decision = z.looseObject({
  at: dateTime,
  app_key: z.string(),
  action: z.string(),
  ip: z.string(),
  score: z.int(),
  tier: z.string(),
  reasons: z.array(z.string()),
});

/**
 * What the console reads beyond apps: usage per hour (from the rollups) and across apps, recent risk decisions (this
 * instance's ring buffer), a risk preview (the same engine, with a fresh velocity counter so that a
 * preview neither counts against nor reads real visitors, nor earlier previews), and the standby hosts' state.
 * The console's sign-in session is in session-routes.ts.
 */
export const consoleAdminRoutes: Route[] = [
  route({
    method: 'get',
    path: '/admin/v1/apps/{appKey}/usage',
    doc: () => ({
      summary: "An app's usage per hour (from the rollups) and this month's quota use, for the console",
      security: adminAuth,
      responses: {
        '200': {
          description:
            'Counts per hour, oldest first (metric names: challenge.TIER, submit.solved|failed, validate.VERDICT, token.KIND)',
          json: ok(
            z.looseObject({
              app_key: z.string(),
              hours: z.array(z.looseObject({ hour: dateTime, counts })),
              quota: z.looseObject({ period: z.string(), used: z.int(), monthly_quota: z.int() }),
            }),
          ),
        },
        ...errors('invalid_request', 'unauthorized', 'not_found', 'database_unavailable'),
      },
    }),
    params: { appKey: appKeyParam },
    query: usageQuery,
    use: adminGuard,
    handler: ({ deps }) =>
      async function appUsageHours(_ctx, { params: { appKey }, query: { hours } }) {
        const app = await deps.apps.require(appKey);
        await deps.usage.flush();
        const period = quotaPeriod();
        const [row] = await deps.db
          .select()
          .from(appUsage)
          .where(and(eq(appUsage.appId, app.id), eq(appUsage.period, period)));
        return success({
          app_key: app.appKey,
          hours: await deps.usage.read(
            [app.appKey, ...(app.previousAppKey ? [app.previousAppKey] : [])],
            hours,
          ),
          quota: { period, used: row?.challenges ?? 0, monthly_quota: describeApp(app).monthly_quota },
        });
      },
  }),
  route({
    method: 'get',
    path: '/admin/v1/usage',
    doc: () => ({
      summary:
        "Every app's usage summed over the last hours, and the totals across apps, for the console's overview",
      security: adminAuth,
      responses: {
        '200': {
          description: 'Counts per app (current and previous key together) and in all',
          json: ok(
            z.strictObject({
              hours: z.int(),
              apps: z.array(
                z.strictObject({
                  app_key: z.string(),
                  name: z.string(),
                  disabled: z.boolean(),
                  test_mode: z.boolean(),
                  counts,
                }),
              ),
              totals: counts,
            }),
          ),
        },
        ...errors('invalid_request', 'unauthorized', 'database_unavailable'),
      },
    }),
    query: usageQuery,
    use: adminGuard,
    handler: ({ deps }) =>
      async function usageOverview(_ctx, { query: { hours } }) {
        await deps.usage.flush();
        const [apps, totals] = await Promise.all([deps.apps.list(), deps.usage.totals(hours)]);
        const all: Record<string, number> = {};
        const rows = apps.map((app) => {
          const counts: Record<string, number> = {};
          for (const key of [app.appKey, app.previousAppKey]) {
            for (const [metric, n] of Object.entries((key && totals.get(key)) || {})) {
              counts[metric] = (counts[metric] ?? 0) + n;
              all[metric] = (all[metric] ?? 0) + n;
            }
          }
          const view = describeApp(app);
          return {
            app_key: view.app_key,
            name: view.name,
            disabled: view.disabled,
            test_mode: view.test_mode,
            counts,
          };
        });
        return success({ hours, apps: rows, totals: all });
      },
  }),
  route({
    method: 'get',
    path: '/admin/v1/risk/decisions',
    doc: () => ({
      summary: "This instance's most recent risk decisions with their reasons, newest first",
      security: adminAuth,
      responses: {
        '200': {
          description: 'Decisions',
          json: ok(z.strictObject({ decisions: z.array(decision) })),
        },
        ...errors('invalid_request', 'unauthorized'),
      },
    }),
    query: decisionsQuery,
    use: adminGuard,
    handler: ({ deps }) =>
      function riskDecisions(_ctx, { query: { app_key, limit } }) {
        return success({ decisions: deps.decisions.recent(limit, app_key) });
      },
  }),
  route({
    method: 'post',
    path: '/admin/v1/risk/preview',
    doc: () => ({
      summary:
        "What a visitor would get under an app's policy (or a proposed one): score, tier, reasons; counts nothing",
      security: adminAuth,
      responses: {
        '200': {
          description: 'The decision the engine would take',
          json: ok(
            z.strictObject({
              score: z.int().min(0).max(100),
              tier: z.enum(['invisible', 'image', 'hard', 'reject']),
              test_mode: z.boolean(),
              image_kinds: z.array(z.string()),
              reasons: z.array(z.string()),
              policy: z.looseObject({}),
            }),
          ),
        },
        ...errors(...bodyErrors, 'unauthorized', 'not_found', 'database_unavailable'),
      },
    }),
    body: previewBody,
    use: adminGuard,
    handler: ({ deps }) => {
      const reputation = deps.config.reputationFile
        ? Reputation.fromFile(deps.config.reputationFile)
        : undefined;
      return async function riskPreview(_ctx, { body }) {
        const app = body.app_key ? await deps.apps.require(body.app_key) : undefined;
        let policy = resolvePolicy(app?.riskPolicy);
        if (body.risk_policy) {
          const parsed = riskPolicy.safeParse(body.risk_policy);
          if (!parsed.success) {
            const issue = parsed.error.issues[0]!;
            throw new GatehouseError(
              'invalid_request',
              `risk_policy.${issue.path.join('.')}: ${issue.message}`,
            );
          }
          policy = parsed.data;
        }
        // A fresh counter per preview: the visitor is judged as on a first request, whatever was previewed before.
        const risk = await new RiskEngine(new MemoryVelocity(), reputation, deps.risk.datacenter).assess({
          appId: `preview:${body.app_key ?? 'none'}`,
          facts: {
            ip: body.ip,
            userAgent: body.user_agent,
            acceptLanguage: body.accept_language,
            secChUa: '',
            secChUaMobile: '',
            secChUaPlatform: '',
            platform: body.platform,
          },
          signals: body.signals,
          policy,
          serverToken: body.server_token,
          attested: body.attested,
        });
        const tier = app?.testMode ? 'invisible' : risk.tier;
        return success({
          score: risk.score,
          tier,
          test_mode: app?.testMode ?? false,
          image_kinds: tier === 'invisible' || tier === 'reject' ? [] : policy.image_kinds,
          reasons: risk.reasons,
          policy,
        });
      };
    },
  }),
  route({
    method: 'get',
    path: '/admin/v1/standby/status',
    doc: () => ({
      summary: "Each published standby host's own state (its /status); unreachable hosts are unknown",
      security: adminAuth,
      responses: {
        '200': {
          description: 'Hosts',
          json: ok(
            z.strictObject({
              api_store: standbyStoreState.optional(),
              hosts: z.array(z.looseObject({ role: z.string(), url: z.string(), reachable: z.boolean() })),
            }),
          ),
        },
        ...errors('unauthorized'),
      },
    }),
    use: adminGuard,
    handler: ({ deps }) =>
      async function standbyStatus() {
        const probe = async (role: string, url: string) => {
          try {
            const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(1500) });
            if (!res.ok) return { role, url, reachable: true, state: `HTTP ${res.status}` };
            const status = (await res.json()) as Record<string, unknown>;
            return { role, url, reachable: true, ...status };
          } catch {
            return { role, url, reachable: false, state: 'unknown' };
          }
        };
        const hosts = [
          ...deps.config.standby.bypassUrls.map((u) => probe('bypass', u)),
          ...deps.config.standby.fallbackUrls.map((u) => probe('fallback', u)),
        ];
        // The API's own store beside the hosts': the console says when outage tokens would be lost.
        return success({
          hosts: await Promise.all(hosts),
          ...(deps.standbyStore ? { api_store: deps.standbyStore } : {}),
        });
      },
  }),
];

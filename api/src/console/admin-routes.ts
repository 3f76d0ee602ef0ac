import { appUsage } from '@gatehouse/core/db/schema';
import { GatehouseError, success } from '@gatehouse/core/errors';
import { parseOrThrow, readBody } from '@gatehouse/core/http';
import type Router from '@koa/router';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { describeApp } from '../apps/repository.ts';
import type { Deps } from '../deps.ts';
import { quotaPeriod } from '../quotas/monthly-quota.ts';
import { RiskEngine } from '../risk/engine.ts';
import { resolvePolicy, riskPolicy } from '../risk/policy.ts';
import { Reputation } from '../risk/reputation.ts';
import { clientSignals } from '../risk/signals.ts';
import { MemoryVelocity } from '../risk/velocity.ts';
import { appKeyParam, requireAdmin } from '../routes/admin.ts';
import { consoleSessionRoutes } from './session-routes.ts';

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
      .default(24),
  })
  .strict();
const decisionsQuery = z
  .object({ app_key: appKeyParam.optional(), limit: z.coerce.number().int().min(1).max(500).default(50) })
  .strict();

/**
 * What the console reads beyond apps: usage per hour (from the rollups) and across apps, recent risk decisions (this
 * instance's ring buffer), a risk preview (the same engine, with a fresh velocity counter so that a
 * preview neither counts against nor reads real visitors, nor earlier previews), and the standby hosts' state;
 * and the console's sign-in session (session-routes.ts).
 */
export function consoleAdminRoutes(router: Router, deps: Deps): void {
  const guard = requireAdmin(deps.adminToken, deps.consoleSessions);
  consoleSessionRoutes(router, deps);
  const reputation = deps.config.reputationFile ? Reputation.fromFile(deps.config.reputationFile) : undefined;

  router.get('/admin/v1/apps/:appKey/usage', guard, async function appUsageHours(ctx) {
    const appKey = parseOrThrow(z.object({ appKey: appKeyParam }), { appKey: ctx.params.appKey }).appKey;
    const { hours } = parseOrThrow(usageQuery, ctx.query);
    const app = await deps.apps.require(appKey);
    await deps.usage.flush();
    const period = quotaPeriod();
    const [row] = await deps.db
      .select()
      .from(appUsage)
      .where(and(eq(appUsage.appId, app.id), eq(appUsage.period, period)));
    ctx.body = success({
      app_key: app.appKey,
      hours: await deps.usage.read([app.appKey, ...(app.previousAppKey ? [app.previousAppKey] : [])], hours),
      quota: { period, used: row?.challenges ?? 0, monthly_quota: describeApp(app).monthly_quota },
    });
  });

  router.get('/admin/v1/usage', guard, async function usageOverview(ctx) {
    const { hours } = parseOrThrow(usageQuery, ctx.query);
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
    ctx.body = success({ hours, apps: rows, totals: all });
  });

  router.get('/admin/v1/risk/decisions', guard, function riskDecisions(ctx) {
    const { app_key, limit } = parseOrThrow(decisionsQuery, ctx.query);
    ctx.body = success({ decisions: deps.decisions.recent(limit, app_key) });
  });

  router.post('/admin/v1/risk/preview', guard, async function riskPreview(ctx) {
    const body = readBody(ctx, previewBody);
    const app = body.app_key ? await deps.apps.require(body.app_key) : undefined;
    let policy = resolvePolicy(app?.riskPolicy);
    if (body.risk_policy) {
      const parsed = riskPolicy.safeParse(body.risk_policy);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new GatehouseError('invalid_request', `risk_policy.${issue.path.join('.')}: ${issue.message}`);
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
    ctx.body = success({
      score: risk.score,
      tier,
      test_mode: app?.testMode ?? false,
      image_kinds: tier === 'invisible' || tier === 'reject' ? [] : policy.image_kinds,
      reasons: risk.reasons,
      policy,
    });
  });

  router.get('/admin/v1/standby/status', guard, async function standbyStatus(ctx) {
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
    ctx.body = success({
      hosts: await Promise.all(hosts),
      ...(deps.standbyStore ? { api_store: deps.standbyStore } : {}),
    });
  });
}

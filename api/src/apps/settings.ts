import { z } from 'zod';
import { PLAN_NAMES, type PlanName } from './plans.ts';

/** App settings an operator may set, shared by the admin API, the CLI and the operator's registration. */
export const appSettings = z.object({
  name: z.string().trim().min(1).max(100),
  plan: z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]).default('free'),
  monthly_quota: z.number().int().min(0).max(2_000_000_000).nullable().default(null),
  overage_allowed: z.boolean().nullable().default(null),
  subscription_expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
  server_token_required: z.boolean().default(false),
  test_mode: z.boolean().default(false),
  pass_token_ttl: z.number().int().min(30).max(3600).default(300),
  client_ip_policy: z.enum(['report', 'reject']).default('report'),
  risk_policy: z.record(z.string(), z.unknown()).default({}),
  allowed_domains: z.array(z.string().min(1).max(253)).max(100).default([]),
});

export type AppSettingsInput = z.input<typeof appSettings>;
export type AppSettings = z.output<typeof appSettings>;

/** For updates every field is optional and nothing defaults. */
export const appSettingsPatch = appSettings
  .partial()
  .extend({
    plan: appSettings.shape.plan.unwrap().optional(),
    server_token_required: z.boolean().optional(),
    test_mode: z.boolean().optional(),
    pass_token_ttl: z.number().int().min(30).max(3600).optional(),
    client_ip_policy: z.enum(['report', 'reject']).optional(),
  })
  .strict();
export type AppSettingsPatch = z.infer<typeof appSettingsPatch>;

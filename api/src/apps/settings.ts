import { z } from 'zod';
import { riskPolicy } from '../risk/policy.ts';
import { PLAN_NAMES, type PlanName } from './plans.ts';

/**
 * The subscription end dates accepted, as UTC instants. PostgreSQL has no year 0 and the driver reads years
 * below 1000 back wrongly (0001 as 2001, 0020-02-29 as an Invalid Date), and a year past 9999 is no longer
 * an RFC 3339 date-time: inside this range every reader sees exactly what was written.
 */
export const SUBSCRIPTION_DATE_RANGE = {
  min: '1970-01-01T00:00:00.000Z',
  max: '9999-12-31T23:59:59.999Z',
} as const;

const inSubscriptionRange = (value: string) => {
  const at = Date.parse(value);
  return at >= Date.parse(SUBSCRIPTION_DATE_RANGE.min) && at <= Date.parse(SUBSCRIPTION_DATE_RANGE.max);
};

const subscriptionDate = z.iso
  .datetime({ offset: true })
  .refine(
    inSubscriptionRange,
    `must be between ${SUBSCRIPTION_DATE_RANGE.min} and ${SUBSCRIPTION_DATE_RANGE.max}`,
  )
  .meta({
    description: `RFC 3339 date-time with an offset, from ${SUBSCRIPTION_DATE_RANGE.min} to ${SUBSCRIPTION_DATE_RANGE.max} (as a UTC instant); null for no end.`,
    // JSON Schema cannot compare instants: the year as written is the closest it can state.
    allOf: [{ pattern: '^(?:19[7-9][0-9]|[2-9][0-9]{3})-' }],
  });

/** Some character that String.prototype.trim keeps (its whitespace set, spelt out), and no NUL. */
const JS_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const NOT_BLANK = `^[^\\u0000]*[^${JS_SPACE}\\u0000][^\\u0000]*$`;

/**
 * What the risk engine reads (risk/policy.ts), checked when it is written and stored as given, so the
 * fields left out keep following the defaults. Unchecked, a misspelt tier or inverted thresholds fell back
 * to the defaults without a word, and a reputation entry that is no IP range failed every challenge.
 */
const riskPolicyField = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const result = riskPolicy.safeParse(value);
    for (const issue of result.success ? [] : result.error.issues) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    }
  })
  .meta({
    description: 'The risk policy (docs/decisions.md, challenge flow); every field optional, defaults apply.',
    properties: (
      z.toJSONSchema(riskPolicy, { io: 'input', unrepresentable: 'any' }) as { properties: object }
    ).properties,
  });

/** Each setting's rule, without defaults: creation adds the defaults, updates take any subset as is. */
const fields = {
  // At most 100 characters as sent, at least one once trimmed (the pattern says so for the document).
  name: z.string().max(100).trim().min(1).meta({ pattern: NOT_BLANK }),
  plan: z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]),
  monthly_quota: z.number().int().min(0).max(2_000_000_000).nullable(),
  overage_allowed: z.boolean().nullable(),
  subscription_expires_at: subscriptionDate.nullable(),
  server_token_required: z.boolean(),
  test_mode: z.boolean(),
  pass_token_ttl: z.number().int().min(30).max(3600),
  client_ip_policy: z.enum(['report', 'reject']),
  risk_policy: riskPolicyField,
  allowed_domains: z.array(z.string().min(1).max(253)).max(100),
  /**
   * The declaration this app is managed from, e.g. {kind: "App", namespace, name} for a Kubernetes custom
   * resource the operator reconciles; null for an app managed by hand. The console shows it read-only.
   */
  managed_by: z
    .object({
      kind: z.string().min(1).max(63),
      namespace: z.string().max(253),
      name: z.string().min(1).max(253),
    })
    .strict()
    .nullable(),
};

/** App settings an operator may set, shared by the admin API, the CLI and the operator's registration. */
export const appSettings = z.object({
  name: fields.name,
  plan: fields.plan.default('free'),
  monthly_quota: fields.monthly_quota.default(null),
  overage_allowed: fields.overage_allowed.default(null),
  subscription_expires_at: fields.subscription_expires_at.default(null),
  server_token_required: fields.server_token_required.default(false),
  test_mode: fields.test_mode.default(false),
  pass_token_ttl: fields.pass_token_ttl.default(300),
  client_ip_policy: fields.client_ip_policy.default('report'),
  risk_policy: fields.risk_policy.default({}),
  allowed_domains: fields.allowed_domains.default([]),
  managed_by: fields.managed_by.default(null),
});

export type AppSettingsInput = z.input<typeof appSettings>;
export type AppSettings = z.output<typeof appSettings>;

/**
 * For updates every field is optional and nothing defaults: a field left out keeps its stored value
 * (zod 4 applies a default even inside `.partial()`, so the patch must not be derived from `appSettings`).
 */
export const appSettingsPatch = z.object(fields).partial().strict();
export type AppSettingsPatch = z.infer<typeof appSettingsPatch>;

/** Body of POST /admin/v1/apps: the settings and nothing else, so a misspelt setting is refused, not ignored. */
export const createAppBody = appSettings.strict();

import { s } from './schema.ts';

/* The App status: what the operator observed, per Kubernetes API conventions. */

/** metav1.Condition, as every Kubernetes API writes it. */
export const conditionSchema = s.object({
  type: s.string({
    description: 'Condition type, e.g. Ready.',
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  }),
  status: s.enum(['True', 'False', 'Unknown']),
  observedGeneration: s.optional(s.integer({ minimum: 0, format: 'int64' })),
  lastTransitionTime: s.time({ description: 'When the status last changed (not when it was last checked).' }),
  reason: s.string({
    description: 'CamelCase reason (controllers/reasons.ts).',
    minLength: 1,
    maxLength: 1024,
    pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
  }),
  message: s.string({ maxLength: 32768 }),
});

const roleCounts = s.object({
  api: s.integer({ minimum: 0 }),
  bypass: s.integer({ minimum: 0 }),
  fallback: s.integer({ minimum: 0 }),
});

export const regionStatusSchema = s.object({
  name: s.string({ maxLength: 20 }),
  endpoints: s.object(
    {
      api: s.string({ maxLength: 2048 }),
      bypass: s.array(s.string({ maxLength: 2048 }), { maxItems: 2 }),
      fallback: s.array(s.string({ maxLength: 2048 }), { maxItems: 2 }),
    },
    { description: 'Public URLs of the region (what clients and SDKs use).' },
  ),
  availableReplicas: s.optional(roleCounts),
  mainHealthy: s.optional(
    s.boolean({
      description:
        "The operator's probes of the main API (with hysteresis); absent before the first verdict.",
    }),
  ),
  serving: s.enum(['main', 'standby', 'none'], {
    description:
      "Who answers: main, the standby (a standby process acknowledged the operator's serve), or none (the main API is down and no standby process could be told to serve).",
  }),
  lastProbeTime: s.optional(
    s.time({ description: 'Last probe of the main API (refreshed at most once a minute).' }),
  ),
  lastSwitchTime: s.optional(s.time({ description: 'When `serving` last changed.' })),
});

export const appStatusSchema = s.object(
  {
    observedGeneration: s.optional(s.integer({ minimum: 0, format: 'int64' })),
    appKey: s.optional(s.string({ description: 'Public app key (ak_...).', maxLength: 128 })),
    credentialsSecret: s.optional(
      s.string({ description: 'Secret holding app_key and app_secret.', maxLength: 253 }),
    ),
    conditions: s.optional(s.array(conditionSchema, { maxItems: 16, listType: 'map', mapKeys: ['type'] })),
    regions: s.optional(s.array(regionStatusSchema, { maxItems: 10, listType: 'map', mapKeys: ['name'] })),
  },
  { description: 'Observed state of an App.' },
);

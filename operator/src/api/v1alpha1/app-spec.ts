import { s } from './schema.ts';

/*
 * The App spec, written once: the CRD's openAPIV3Schema is generated from these schemas
 * (`npm run -w @gatehouse/operator generate`) and the operator's types are inferred from them.
 */

const DNS_NAME = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?\\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const hostname = (description: string) => s.string({ description, pattern: DNS_NAME, maxLength: 253 });
const hostPair = (prefix: string) =>
  s.array(hostname(`A host name starting with \`${prefix}\`.`), {
    description: `Exactly two \`${prefix}\` host names (clients try both).`,
    minItems: 2,
    maxItems: 2,
    listType: 'set',
    validations: [
      { rule: `self.all(h, h.startsWith('${prefix}'))`, message: `every host must start with '${prefix}'` },
    ],
  });
const secretRef = (description: string) =>
  s.object(
    { name: s.string({ description: 'Secret name.', maxLength: 253, pattern: DNS_NAME }) },
    { description },
  );
const resources = s.object(
  {
    requests: s.optional(
      s.map(s.quantity(), { description: 'Minimum resources, e.g. {cpu: 250m, memory: 256Mi}.' }),
    ),
    limits: s.optional(s.map(s.quantity(), { description: 'Maximum resources.' })),
  },
  { description: 'Container resources, as core/v1 ResourceRequirements (requests and limits).' },
);

export const hostsSchema = s.object(
  {
    api: hostname('Public host of the main verification API in this region.'),
    bypass: hostPair('bypass.'),
    fallback: hostPair('fallbackapiv1.'),
  },
  {
    description: 'Public host names routed to this region (one Ingress per region, one rule per host).',
    validations: [
      {
        rule: "!self.api.startsWith('bypass.') && !self.api.startsWith('fallbackapiv1.')",
        message: 'the api host must not be a standby host name',
      },
    ],
  },
);

export const regionSchema = s.object({
  name: s.string({
    description: 'Short region name, unique in the App; part of every object name (`<app>-<region>-api`).',
    pattern: '^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$',
    maxLength: 20,
  }),
  locality: s.optional(
    s.string({
      description:
        "CockroachDB region this region reads and writes through (`crdb_region`, the `region` of the nodes' --locality). Passed to pods as GATEHOUSE_DB_REGION. Default: the region name.",
      maxLength: 63,
      // The API's check of GATEHOUSE_DB_REGION (core/src/db/region.ts): refused here, not by a crashing pod.
      pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$',
    }),
  ),
  replicas: s.defaulted(s.integer({ description: 'Main API replicas.', minimum: 1, maximum: 100 }), 2),
  resources: s.optional(resources),
  standby: s.optional(
    s.object(
      {
        replicas: s.defaulted(
          s.integer({ description: 'Replicas of each standby role.', minimum: 1, maximum: 20 }),
          2,
        ),
        resources: s.optional(resources),
      },
      { description: 'The standby roles (bypass and fallback), one Deployment each.' },
    ),
  ),
  hosts: hostsSchema,
  databaseSecretRef: s.optional(
    s.object(
      {
        name: s.string({ maxLength: 253, pattern: DNS_NAME }),
        key: s.defaulted(s.string({ maxLength: 253 }), 'DATABASE_URL'),
      },
      {
        description:
          "DATABASE_URL for this region's pods (e.g. the region's CockroachDB nodes); overrides the runtime Secret's.",
      },
    ),
  ),
  standbyStoreSecretRef: s.optional(
    s.object(
      {
        name: s.string({ maxLength: 253, pattern: DNS_NAME }),
        key: s.defaulted(s.string({ maxLength: 253 }), 'STANDBY_STORE_URL'),
      },
      {
        description:
          "STANDBY_STORE_URL for this region's API and standby pods (offline_ consumption is shared between them): the region's own Redis, so one region's store failing leaves the others' continuity path alone; overrides the runtime Secret's.",
      },
    ),
  ),
  nodeSelector: s.optional(
    s.map(s.string({ maxLength: 63 }), {
      description: "Pins this region's pods, e.g. {topology.kubernetes.io/region: europe-west1}.",
      maxProperties: 10,
    }),
  ),
  probeUrl: s.optional(
    s.string({
      description:
        'Base URL the operator probes (`GET <url>/readyz`) for this region. Default: https://<hosts.api>.',
      pattern: '^https?://',
      maxLength: 2048,
    }),
  ),
  tlsSecretName: s.optional(
    s.string({ description: 'TLS Secret for every host of the region (Ingress `tls`).', maxLength: 253 }),
  ),
});

/**
 * The service's risk policy document (api/src/risk/policy.ts), passed to the admin API as written, so
 * its keys are the service's snake_case. Known fields are checked here; the rest is kept as written.
 */
export const riskPolicySchema = s.object(
  {
    invisible_below: s.optional(
      s.integer({
        description: 'Score below which the invisible tier is used (35).',
        minimum: 0,
        maximum: 101,
      }),
    ),
    image_below: s.optional(
      s.integer({
        description: 'Score below which one image challenge is used (70).',
        minimum: 0,
        maximum: 101,
      }),
    ),
    high: s.optional(s.enum(['hard', 'reject'], { description: 'What a high score gets (hard).' })),
    image_kinds: s.optional(
      s.array(s.enum(['slide', 'click', 'select']), {
        description: 'Image challenges to draw from.',
        minItems: 1,
        maxItems: 3,
        listType: 'set',
      }),
    ),
  },
  {
    description:
      "Per-app risk policy, as the service's risk_policy (velocity, rate_limit and reputation pass through unchecked).",
    preserveUnknown: true,
    validations: [
      {
        rule: '!has(self.invisible_below) || !has(self.image_below) || self.invisible_below <= self.image_below',
        message: 'invisible_below must not exceed image_below',
      },
    ],
  },
);

export const appSpecSchema = s.object(
  {
    displayName: s.optional(
      s.string({
        description: "Name in the service's database. Default: <namespace>/<name>.",
        minLength: 1,
        maxLength: 100,
      }),
    ),
    plan: s.defaulted(s.enum(['free', 'pro', 'enterprise'], { description: 'Subscription plan.' }), 'free'),
    monthlyQuota: s.optional(
      s.integer({
        description: 'Challenges per month; overrides the plan.',
        minimum: 0,
        maximum: 2_000_000_000,
        format: 'int64',
      }),
    ),
    overageAllowed: s.optional(
      s.boolean({ description: 'Serve past the quota (else: degraded mode); overrides the plan.' }),
    ),
    serverTokenRequired: s.defaulted(
      s.boolean({ description: 'Challenges need a server token (`sct_`).' }),
      false,
    ),
    allowedDomains: s.optional(
      s.array(hostname('A domain the widget may run on.'), { maxItems: 100, listType: 'set' }),
    ),
    riskPolicy: s.optional(riskPolicySchema),
    testMode: s.defaulted(
      s.boolean({ description: 'Test app: invisible tier, trivial puzzles. For CI only.' }),
      false,
    ),
    passTokenTtl: s.optional(
      s.integer({ description: 'Pass-token lifetime in seconds.', minimum: 30, maximum: 3600 }),
    ),
    clientIpPolicy: s.optional(
      s.enum(['report', 'reject'], { description: 'What a client_ip mismatch does.' }),
    ),
    disabled: s.defaulted(
      s.boolean({ description: 'Disable the app in the service (answers app_disabled).' }),
      false,
    ),
    credentialsSecretRef: s.optional(
      secretRef(
        'Secret holding app_key and app_secret. Absent: the app is registered and the Secret created. Default name: <name>-credentials.',
      ),
    ),
    runtimeSecretRef: s.optional(
      secretRef(
        "Secret whose keys become the pods' environment (DATABASE_URL, GATEHOUSE_TOKEN_KEY, STANDBY_STORE_URL, STANDBY_SYNC_TOKEN, REDIS_URL...). Default: gatehouse-runtime.",
      ),
    ),
    images: s.optional(
      s.object(
        {
          api: s.optional(
            s.string({ description: "Main API image. Default: the operator's --api-image.", maxLength: 512 }),
          ),
          standby: s.optional(
            s.string({
              description: "Standby image. Default: the operator's --standby-image.",
              maxLength: 512,
            }),
          ),
        },
        { description: 'Container images.' },
      ),
    ),
    trustedProxies: s.optional(
      s.string({
        description:
          "TRUSTED_PROXIES of this App's pods: the proxies whose X-Forwarded-For entries are believed, read from the right. A hop count (`2`: a CDN in front of the Ingress controller), or a comma list of IPs, CIDRs and `loopback`, `linklocal`, `uniquelocal`, `private`. Default: the operator's --trusted-proxies (`private`: the Ingress controller's pods).",
        minLength: 1,
        maxLength: 2048,
        validations: [
          {
            rule: "self.matches('^[0-9]+$') ? int(self) >= 1 && int(self) <= 20 : self.split(',').all(e, e.trim() in ['loopback', 'linklocal', 'uniquelocal', 'private'] || isIP(e.trim()) || isCIDR(e.trim()))",
            message:
              'must be a hop count from 1 to 20, or a comma list of IPs, CIDRs, loopback, linklocal, uniquelocal, private',
          },
        ],
      }),
    ),
    ingressClassName: s.optional(
      s.string({ description: 'IngressClass of the per-region Ingresses.', maxLength: 253 }),
    ),
    regions: s.array(regionSchema, {
      description: 'Regions to run the API and the standby in; names are unique.',
      minItems: 1,
      maxItems: 10,
      listType: 'map',
      mapKeys: ['name'],
    }),
  },
  {
    description: 'Desired state of an App.',
    validations: [
      {
        rule: "(has(oldSelf.credentialsSecretRef) ? oldSelf.credentialsSecretRef.name : '') == (has(self.credentialsSecretRef) ? self.credentialsSecretRef.name : '')",
        message: 'credentialsSecretRef is immutable',
      },
      {
        rule: 'self.regions.all(a, self.regions.all(b, a.name == b.name || ([a.hosts.api] + a.hosts.bypass + a.hosts.fallback).all(h, !(h in [b.hosts.api] + b.hosts.bypass + b.hosts.fallback))))',
        message: 'a host name may belong to one region only',
      },
    ],
  },
);

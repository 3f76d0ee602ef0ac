import { s } from './schema.ts';

/*
 * The App spec, written once: the CRD's openAPIV3Schema is generated from these schemas
 * (`npm run -w @gatehouse/operator generate`) and the operator's types are inferred from them.
 */

const DNS_NAME = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?\\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** A label key: an optional DNS-subdomain prefix and `/`, then a name of up to 63 characters. */
const LABEL_KEY =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
/** An image reference: registry and path in lower case, an optional tag, an optional digest; no spaces. */
const IMAGE =
  '^[a-z0-9]([a-z0-9._/:-]*[a-z0-9])?(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[a-z0-9]+:[a-f0-9]{32,128})?$';
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const PROXY = `(loopback|linklocal|uniquelocal|private|${OCTET}(\\.${OCTET}){3}(/(3[0-2]|[12]?[0-9]))?|[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,4}){2,7}(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)`;
/** TRUSTED_PROXIES: a hop count 1-20, or a comma list of IPs, CIDRs and names (a pattern: CEL would cost too much). */
const TRUSTED_PROXIES = `^(([1-9]|1[0-9]|20)|( *${PROXY} *(, *${PROXY} *)*))$`;
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
    s.map(s.string({ maxLength: 63, pattern: LABEL_VALUE }), {
      description: "Pins this region's pods, e.g. {topology.kubernetes.io/region: europe-west1}.",
      maxProperties: 10,
      validations: [
        {
          rule: `self.all(k, size(k) <= 317 && k.matches('${LABEL_KEY.replaceAll('\\', '\\\\')}'))`,
          message:
            'every key must be a label key (an optional DNS prefix and /, then up to 63 letters, digits, -, _ or .)',
        },
      ],
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
    s.string({
      description: 'TLS Secret for every host of the region (Ingress `tls`).',
      maxLength: 253,
      pattern: DNS_NAME,
    }),
  ),
});

const positive = (description: string) => s.number({ description, minimum: 0, exclusiveMinimum: true });
const pair = (description: string) =>
  s.array(positive('A threshold.'), { description, minItems: 2, maxItems: 2 });
const ranges = (description: string) =>
  s.array(s.string({ maxLength: 49 }), {
    description,
    maxItems: 1000,
    validations: [
      { rule: 'self.all(r, isIP(r) || isCIDR(r))', message: 'every entry must be an IP or a CIDR' },
    ],
  });
const pressureSource = (description: string) =>
  s.object(
    {
      allowance: s.optional(
        s.number({ description: 'Challenges per sliding hour at the base price.', minimum: 0 }),
      ),
      step: s.optional(positive('Challenges past the allowance per doubling of the price.')),
    },
    { description },
  );

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
    velocity: s.optional(
      s.object(
        {
          ip: s.optional(pair('Challenges per address: [per minute, per hour] (20, 60).')),
          prefix: s.optional(pair('Challenges per network prefix: [per minute, per hour] (100, 400).')),
          app: s.optional(positive('Challenges per minute for the whole app (20000).')),
        },
        { description: 'Velocity thresholds that raise the risk score.' },
      ),
    ),
    rate_limit: s.optional(
      s.object(
        {
          ip_per_minute: s.optional(positive('Requests per address per minute (120).')),
          high_risk_ip_per_minute: s.optional(positive('Requests per high-risk address per minute (20).')),
        },
        { description: 'Per-address rate limits.' },
      ),
    ),
    reputation: s.optional(
      s.object(
        {
          deny: s.optional(ranges('Addresses and ranges refused outright.')),
          datacenter: s.optional(ranges('Addresses and ranges scored as hosting providers.')),
          allow: s.optional(ranges('Addresses and ranges never scored as risky.')),
        },
        { description: 'Per-app address lists (IPs or CIDRs).' },
      ),
    ),
    pressure: s.optional(
      s.object(
        {
          ip: s.optional(pressureSource('A client (IPv4 address, IPv6 /64).')),
          prefix: s.optional(pressureSource('Its network (/24, /48).')),
          datacenter: s.optional(pressureSource("A hosting address's provider range.")),
          image_at: s.optional(
            s.number({ description: 'Doublings from which an image is added (4).', minimum: 0, maximum: 40 }),
          ),
          reject_at: s.optional(
            s.number({
              description: 'Doublings from which requests are refused (10).',
              minimum: 0,
              exclusiveMinimum: true,
              maximum: 40,
            }),
          ),
        },
        { description: 'Per-source pricing of sustained automation.' },
      ),
    ),
  },
  {
    description:
      "Per-app risk policy, as the service's risk_policy; unknown keys are refused (a misspelt key would be ignored by the service).",
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
            s.string({
              description: "Main API image. Default: the operator's --api-image.",
              maxLength: 512,
              pattern: IMAGE,
            }),
          ),
          standby: s.optional(
            s.string({
              description: "Standby image. Default: the operator's --standby-image.",
              maxLength: 512,
              pattern: IMAGE,
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
        maxLength: 4096,
        pattern: TRUSTED_PROXIES,
      }),
    ),
    ingressClassName: s.optional(
      s.string({
        description: 'IngressClass of the per-region Ingresses.',
        maxLength: 253,
        pattern: DNS_NAME,
      }),
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

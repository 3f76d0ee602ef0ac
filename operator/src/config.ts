import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_TRUSTED_PROXIES, trustedProxiesProblem } from './trusted-proxies.ts';

/** Every setting of the operator: a flag (`--admin-url`) or its environment variable (GATEHOUSE_ADMIN_URL). */
const SETTINGS = {
  'admin-url': { env: 'GATEHOUSE_ADMIN_URL', schema: z.url() },
  'admin-token': { env: 'GATEHOUSE_ADMIN_TOKEN', schema: z.string().min(24).optional() },
  'admin-token-file': { env: 'GATEHOUSE_ADMIN_TOKEN_FILE', schema: z.string().optional() },
  'standby-token': { env: 'GATEHOUSE_STANDBY_SYNC_TOKEN', schema: z.string().min(1).optional() },
  'api-image': { env: 'GATEHOUSE_API_IMAGE', schema: z.string().default('ghcr.io/gatehouse/api:0.1.0') },
  'standby-image': {
    env: 'GATEHOUSE_STANDBY_IMAGE',
    schema: z.string().default('ghcr.io/gatehouse/standby:0.1.0'),
  },
  'runtime-secret': { env: 'GATEHOUSE_RUNTIME_SECRET', schema: z.string().default('gatehouse-runtime') },
  'trusted-proxies': {
    env: 'GATEHOUSE_TRUSTED_PROXIES',
    schema: z
      .string()
      .default(DEFAULT_TRUSTED_PROXIES)
      .superRefine((v, ctx) => {
        const problem = trustedProxiesProblem(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
  },
  'database-regions': {
    env: 'GATEHOUSE_DATABASE_REGIONS',
    schema: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(,[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/, {
        message: 'a comma list of database regions (lower-case DNS labels)',
      })
      .optional(),
  },
  'secret-namespaces': {
    env: 'GATEHOUSE_SECRET_NAMESPACES',
    schema: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(,[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/, {
        message: 'a comma list of namespaces',
      })
      .optional(),
  },
  'watch-namespace': { env: 'WATCH_NAMESPACE', schema: z.string().optional() },
  'leader-elect': { env: 'LEADER_ELECT', schema: z.enum(['true', 'false']).default('true') },
  'manage-crd': { env: 'MANAGE_CRD', schema: z.enum(['true', 'false']).default('true') },
  'leader-election-namespace': { env: 'POD_NAMESPACE', schema: z.string().default('gatehouse-system') },
  'leader-election-id': {
    env: 'LEADER_ELECTION_ID',
    schema: z.string().default('gatehouse-operator-leader'),
  },
  'health-port': { env: 'HEALTH_PORT', schema: z.coerce.number().int().min(0).max(65535).default(8081) },
  'metrics-port': { env: 'METRICS_PORT', schema: z.coerce.number().int().min(0).max(65535).default(8080) },
  'metrics-auth': { env: 'METRICS_AUTH', schema: z.enum(['kubernetes', 'none']).default('kubernetes') },
  'bind-address': { env: 'BIND_ADDRESS', schema: z.string().default('0.0.0.0') },
  'kube-api-qps': { env: 'KUBE_API_QPS', schema: z.coerce.number().min(1).max(1000).default(50) },
  'kube-api-burst': { env: 'KUBE_API_BURST', schema: z.coerce.number().int().min(1).max(2000).default(100) },
  concurrency: { env: 'CONCURRENCY', schema: z.coerce.number().int().min(1).max(32).default(2) },
  'resync-seconds': {
    env: 'RESYNC_SECONDS',
    schema: z.coerce.number().int().min(5).max(86_400).default(300),
  },
  'cleanup-timeout-seconds': {
    env: 'CLEANUP_TIMEOUT_SECONDS',
    schema: z.coerce.number().int().min(0).max(86_400).default(300),
  },
  'probe-interval-ms': {
    env: 'PROBE_INTERVAL_MS',
    schema: z.coerce.number().int().min(50).max(600_000).default(500),
  },
  'probe-timeout-ms': {
    env: 'PROBE_TIMEOUT_MS',
    schema: z.coerce.number().int().min(50).max(60_000).default(400),
  },
  'probe-fail-after': { env: 'PROBE_FAIL_AFTER', schema: z.coerce.number().int().min(1).max(100).default(3) },
  'probe-recover-after': {
    env: 'PROBE_RECOVER_AFTER',
    schema: z.coerce.number().int().min(1).max(100).default(3),
  },
  'probe-flap-window-seconds': {
    env: 'PROBE_FLAP_WINDOW_SECONDS',
    schema: z.coerce.number().int().min(0).max(86_400).default(60),
  },
  'probe-flap-hold-seconds': {
    env: 'PROBE_FLAP_HOLD_SECONDS',
    schema: z.coerce.number().int().min(0).max(86_400).default(30),
  },
  'log-level': {
    env: 'LOG_LEVEL',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  },
} as const;
type Key = keyof typeof SETTINGS;
type Raw = { [K in Key]: z.infer<(typeof SETTINGS)[K]['schema']> };

export interface OperatorConfig {
  adminUrl: string;
  /** Bearer token of the main API's admin API: never logged. */
  adminToken: string;
  /**
   * Bearer token of the standby's `POST /internal/v1/mode`: the sync credential (STANDBY_SYNC_TOKEN), the
   * only one standbys accept there. Never the admin token; unset, the operator cannot switch traffic.
   */
  standbyToken: string | undefined;
  images: { api: string; standby: string };
  runtimeSecret: string;
  /**
   * TRUSTED_PROXIES of the API and standby pods it renders (an App's spec.trustedProxies overrides it):
   * the proxies in front of them whose X-Forwarded-For entries are believed. Never TRUST_PROXY.
   */
  trustedProxies: string;
  watchNamespace: string | undefined;
  /**
   * The namespaces where its RBAC lets it read and create Secrets (RoleBindings there): Apps elsewhere
   * are refused in status. Undefined: every namespace it watches (a cluster-wide binding).
   */
  secretNamespaces: string[] | undefined;
  /** The database's regions: an App whose locality is not one of them is refused in status. Unset: not checked. */
  databaseRegions: string[] | undefined;
  leaderElection: { enabled: boolean; namespace: string; name: string; identity: string };
  /** The leader upgrades the App CRD when the cluster's is older than this operator (crd-upgrade.ts). */
  manageCrd: boolean;
  healthPort: number;
  metricsPort: number;
  /**
   * Who may read /metrics: `kubernetes`, a bearer token the apiserver authenticates and allows `get` on
   * /metrics (TokenReview, SubjectAccessReview; the command line's default), or `none`, anyone who
   * reaches the port. Unset in a config built in code: none.
   */
  metricsAuth?: 'kubernetes' | 'none';
  bindAddress: string;
  /** Client-side rate limit of the controllers' requests (token bucket; watches and the Lease exempt). */
  kubeApi: { qps: number; burst: number };
  concurrency: number;
  resyncMs: number;
  /** How long a deleted App waits for the admin API to disable its app before it is let go anyway. */
  cleanupTimeoutMs: number;
  /**
   * The probes of each region's main API (health/prober.ts); the flap settings are optional so that a
   * config built in code gets the prober's defaults.
   */
  probe: {
    intervalMs: number;
    timeoutMs: number;
    failAfter: number;
    recoverAfter: number;
    flapWindowMs?: number;
    flapHoldMs?: number;
  };
  logLevel: Raw['log-level'];
}

/** Reads flags, then the environment, then defaults; throws one precise line per bad setting. */
export function loadOperatorConfig(
  argv: string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): OperatorConfig {
  const options = Object.fromEntries(Object.keys(SETTINGS).map((k) => [k, { type: 'string' as const }]));
  const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, { env: name, schema }] of Object.entries(SETTINGS)) {
    const given = (values as Record<string, string | undefined>)[key] ?? (env[name] || undefined);
    const parsed = schema.safeParse(given);
    if (parsed.success) raw[key] = parsed.data;
    else problems.push(`--${key} (${name}): ${parsed.error.issues.map((i) => i.message).join(', ')}`);
  }
  if (problems.length) throw new Error(`Invalid operator configuration:\n  ${problems.join('\n  ')}`);
  const r = raw as Raw;
  const adminToken =
    r['admin-token'] ?? (r['admin-token-file'] ? readFileSync(r['admin-token-file'], 'utf8').trim() : '');
  if (!adminToken)
    throw new Error('The admin token is missing: set GATEHOUSE_ADMIN_TOKEN or --admin-token-file.');
  return {
    adminUrl: r['admin-url'].replace(/\/+$/, ''),
    adminToken,
    standbyToken: r['standby-token'],
    images: { api: r['api-image'], standby: r['standby-image'] },
    runtimeSecret: r['runtime-secret'],
    trustedProxies: r['trusted-proxies'],
    watchNamespace: r['watch-namespace'],
    databaseRegions: r['database-regions']?.split(','),
    secretNamespaces: r['secret-namespaces']?.split(','),
    leaderElection: {
      enabled: r['leader-elect'] === 'true',
      namespace: r['leader-election-namespace'],
      name: r['leader-election-id'],
      identity: `${env.POD_NAME || hostname()}_${randomBytes(4).toString('hex')}`,
    },
    manageCrd: r['manage-crd'] === 'true',
    healthPort: r['health-port'],
    metricsPort: r['metrics-port'],
    metricsAuth: r['metrics-auth'],
    bindAddress: r['bind-address'],
    kubeApi: { qps: r['kube-api-qps'], burst: r['kube-api-burst'] },
    concurrency: r.concurrency,
    resyncMs: r['resync-seconds'] * 1000,
    cleanupTimeoutMs: r['cleanup-timeout-seconds'] * 1000,
    probe: {
      intervalMs: r['probe-interval-ms'],
      timeoutMs: r['probe-timeout-ms'],
      failAfter: r['probe-fail-after'],
      recoverAfter: r['probe-recover-after'],
      flapWindowMs: r['probe-flap-window-seconds'] * 1000,
      flapHoldMs: r['probe-flap-hold-seconds'] * 1000,
    },
    logLevel: r['log-level'],
  };
}

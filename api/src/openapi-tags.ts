/**
 * The OpenAPI document's operation groups (its tags, in the order the reference shows them), given by
 * path so that every operation, a new one included, lands in exactly one group.
 */
export const OPENAPI_TAGS = [
  {
    name: 'Integration',
    description: "What an integrator's backend calls: validate pass tokens, issue server tokens",
  },
  {
    name: 'Siteverify',
    description: 'Drop-in verification for Turnstile, reCAPTCHA and hCaptcha integrations',
  },
  {
    name: 'Challenge',
    description: 'What the widget calls: challenges, answers, the accessible alternative',
  },
  { name: 'Widget', description: "The widget's files" },
  { name: 'Standby', description: 'Failover: what clients learn of the standby hosts, and their snapshot' },
  { name: 'Apps', description: 'Admin: apps, their settings, secrets and keys' },
  {
    name: 'Console',
    description: "Admin: usage, risk decisions and preview, standby status, the console's sign-in",
  },
  { name: 'Standby keys', description: "Admin: the standby hosts' offline signing keys and sync credential" },
  { name: 'Operations', description: 'Health, readiness, metrics and this document' },
] as const;

type Tag = (typeof OPENAPI_TAGS)[number]['name'];

export function tagOf(path: string): Tag {
  if (path.endsWith('/siteverify')) return 'Siteverify';
  if (path === '/v1/validate' || path.startsWith('/v1/server/')) return 'Integration';
  if (path.startsWith('/v1/challenge/')) return 'Challenge';
  if (path.startsWith('/widget/')) return 'Widget';
  if (path === '/v1/standby' || path.startsWith('/internal/v1/standby')) return 'Standby';
  if (path.startsWith('/admin/v1/standby-keys')) return 'Standby keys';
  if (
    path.endsWith('/usage') ||
    path.startsWith('/admin/v1/risk/') ||
    path === '/admin/v1/session' ||
    path === '/admin/v1/standby/status'
  )
    return 'Console';
  if (path.startsWith('/admin/v1/apps')) return 'Apps';
  return 'Operations';
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `paths` with each operation tagged by its path's group. */
export function withTags<P extends Record<string, object>>(paths: P): P {
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.has(method) && op && typeof op === 'object')
        (op as { tags?: string[] }).tags = [tagOf(path)];
    }
  }
  return paths;
}

import { isIP } from 'node:net';

/**
 * TRUSTED_PROXIES as the API and the standby read it: a hop count `N`, or a comma list of IP addresses,
 * CIDRs and the names below. The operator sets it on every pod it renders (the Ingress controller and
 * the Service sit between the client and the pod); checking it here refuses a typo at start-up instead
 * of in every pod.
 */
export const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal', 'private'] as const;

/** What the Ingress controller → Service → pod topology needs: controller pods have cluster-private addresses. */
export const DEFAULT_TRUSTED_PROXIES = 'private';

function entryProblem(entry: string): string | undefined {
  if ((PROXY_NAMES as readonly string[]).includes(entry)) return undefined;
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || extra !== undefined)
    return `"${entry}" is not an IP address, a CIDR or one of ${PROXY_NAMES.join(', ')}`;
  if (prefix === undefined) return undefined;
  const bits = /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
  return bits <= (family === 4 ? 32 : 128) ? undefined : `"${entry}" has no valid prefix length`;
}

/** Undefined when `value` is a valid TRUSTED_PROXIES setting, else why not. */
export function trustedProxiesProblem(value: string): string | undefined {
  if (/^[0-9]+$/.test(value))
    return Number(value) >= 1 && Number(value) <= 20 ? undefined : 'a hop count is 1 to 20';
  const entries = value.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) return 'an empty entry in the list';
  return entries.map(entryProblem).find(Boolean);
}

import type { Middleware } from 'koa';
import { z } from 'zod';
import { type IpRange, parseIp, parseIpRange } from '../ip.ts';

/**
 * The client address every per-address limit and risk signal stands on. Only the proxies the deployment
 * declares are trusted: the forwarding header is read from the right, one hop at a time, and a hop is
 * taken as the client as soon as it is not a trusted proxy. Whatever a client writes to the left of the
 * entries its proxies appended is never reached, and an entry that is not an address stops the walk at
 * the last address a trusted proxy vouched for.
 */
export type TrustedProxies =
  /** No proxy: the socket peer is the client, forwarding headers are ignored. */
  | { readonly kind: 'none' }
  /** Exactly this many proxies stand in front (the socket peer is the first of them). */
  | { readonly kind: 'hops'; readonly hops: number }
  /** Any address in these ranges is a proxy. */
  | { readonly kind: 'ranges'; readonly ranges: readonly IpRange[] };

/** Where forwarded hops are read: the de facto `X-Forwarded-For`, or RFC 7239's `Forwarded` (`for=`). */
export type ForwardingHeader = 'x-forwarded-for' | 'forwarded';

export interface ClientAddressConfig {
  trustedProxies: TrustedProxies;
  header: ForwardingHeader;
}

/** A bound on the hops walked: no real chain of proxies is longer, and a long header costs nothing then. */
const MAX_HOPS = 32;

/** Named ranges a deployment may list instead of spelling out CIDRs. */
const NAMED_RANGES: Record<string, readonly string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['fc00::/7'],
  // Where Ingress controllers and Service proxies live in a cluster: RFC 1918, carrier-grade NAT (some CNIs
  // and cloud networks number pods from it), IPv6 unique-local, and loopback.
  private: [
    '10.0.0.0/8',
    '172.16.0.0/12',
    '192.168.0.0/16',
    '100.64.0.0/10',
    'fc00::/7',
    '127.0.0.0/8',
    '::1/128',
  ],
};

/**
 * Parses `TRUSTED_PROXIES`: empty (no proxy), a hop count, or a comma-separated list of addresses, CIDRs
 * and the names `loopback`, `linklocal`, `uniquelocal`, `private`. Throws one precise sentence otherwise.
 */
export function parseTrustedProxies(spec: string | undefined): TrustedProxies {
  const text = (spec ?? '').trim();
  if (text === '') return { kind: 'none' };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops < 1 || hops > MAX_HOPS) {
      throw new Error(`TRUSTED_PROXIES as a hop count must be between 1 and ${MAX_HOPS}, got ${text}.`);
    }
    return { kind: 'hops', hops };
  }
  const ranges: IpRange[] = [];
  for (const item of text.split(',').map((s) => s.trim())) {
    for (const cidr of NAMED_RANGES[item] ?? [item]) ranges.push(parseRange(cidr));
  }
  return { kind: 'ranges', ranges };
}

function parseRange(item: string): IpRange {
  const range = parseIpRange(item);
  if (!range) {
    throw new Error(
      `TRUSTED_PROXIES: "${item}" is neither an address, a CIDR (10.0.0.0/8) nor one of ${Object.keys(NAMED_RANGES).join(', ')}.`,
    );
  }
  return range;
}

/** The environment keys, for each service's config schema. */
export const clientAddressEnv = z.object({
  TRUSTED_PROXIES: z.string().optional(),
  CLIENT_ADDRESS_HEADER: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
  // Koa's `proxy: true`, which took the leftmost X-Forwarded-For entry: whatever the client wrote.
  TRUST_PROXY: z
    .string()
    .optional()
    .refine((v) => v === undefined || ['', 'false', '0'].includes(v), {
      message:
        'TRUST_PROXY is no longer read: it let every client choose its own address. Declare the proxies in ' +
        'front instead: TRUSTED_PROXIES=<hop count> or a list of CIDRs (e.g. TRUSTED_PROXIES=private behind ' +
        'an Ingress controller; docs/security.md, "Client address").',
    }),
});

/** Reads the client-address settings from the environment; throws one precise sentence for a bad value. */
export function loadClientAddressConfig(env: NodeJS.ProcessEnv): ClientAddressConfig {
  const result = clientAddressEnv.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return {
    trustedProxies: parseTrustedProxies(result.data.TRUSTED_PROXIES),
    header: result.data.CLIENT_ADDRESS_HEADER,
  };
}

/**
 * The client address of a request that reached us from `peer` with these forwarding header values.
 * 1. No proxy declared, or the peer is not a trusted proxy: the peer.
 * 2. Otherwise walk the hops from the right: each one a trusted proxy vouches for is the next candidate,
 *    until a hop that is not a proxy (by range), the declared hop count is used up, or the header ends.
 * 3. An entry that is not an address ends the walk at the last address found.
 */
export function clientAddress(
  peer: string,
  header: string | string[] | undefined,
  config: ClientAddressConfig,
): string {
  return fromPeer(standardPeer(peer), header, config);
}

/** The socket peer in its standard text form (an IPv4-mapped IPv6 address as IPv4); as given when not an address. */
function standardPeer(peer: string): string {
  return parseIp(peer)?.toString() ?? peer;
}

/** `clientAddress` from a peer already in its standard form. */
function fromPeer(
  peerAddress: string,
  header: string | string[] | undefined,
  config: ClientAddressConfig,
): string {
  const trusted = config.trustedProxies;
  if (trusted.kind === 'none' || header === undefined) return peerAddress;
  const values = Array.isArray(header) ? header.join(',') : header;
  const hops = config.header === 'forwarded' ? forwardedFor(values) : values.split(',');
  let client = peerAddress;
  for (let i = 0; i < hops.length && i < MAX_HOPS; i++) {
    if (!isProxy(client, i, trusted)) return client;
    const next = hopAddress(hops[hops.length - 1 - i] ?? '');
    if (next === null) return client;
    client = next;
  }
  return client;
}

/** Whether the `index`-th hop from our side (0: the socket peer) is a proxy the deployment declared. */
function isProxy(address: string, index: number, trusted: TrustedProxies): boolean {
  if (trusted.kind === 'none') return false;
  if (trusted.kind === 'hops') return index < trusted.hops;
  const parsed = parseIp(address);
  if (!parsed) return false;
  return trusted.ranges.some(([base, bits]) => parsed.kind() === base.kind() && parsed.match(base, bits));
}

/** One hop's address: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]:5678`; null otherwise. */
function hopAddress(raw: string): string | null {
  let value = raw.trim();
  if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(value);
  if (bracketed) value = bracketed[1] ?? '';
  else if (/^[\d.]+:\d{1,5}$/.test(value)) value = value.slice(0, value.indexOf(':'));
  return parseIp(value)?.toString() ?? null;
}

/** The `for=` parameter of each element of a `Forwarded` header (RFC 7239), in order; '' where absent. */
function forwardedFor(value: string): string[] {
  return value.split(',').map((element) => {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === 'for') return pair.slice(eq + 1).trim();
    }
    return '';
  });
}

/** Sets `ctx.ip` to the client address as the deployment's proxies declare it; first in every service's chain. */
export function clientAddressFrom(config: ClientAddressConfig): Middleware {
  const headerName = config.header;
  return function resolveClientAddress(ctx, next) {
    ctx.request.ip = fromPeer(socketPeer(ctx.req.socket), ctx.req.headers[headerName], config);
    return next();
  };
}

/**
 * A connection's peer never changes, and a kept-alive connection carries many requests: its standard form
 * is worked out once per socket. A socket that has lost its address (closed) is not remembered.
 */
const socketPeers = new WeakMap<object, string>();
function socketPeer(socket: { remoteAddress?: string | undefined }): string {
  const known = socketPeers.get(socket);
  if (known !== undefined) return known;
  const raw = socket.remoteAddress;
  if (raw === undefined) return '';
  const peer = standardPeer(raw);
  socketPeers.set(socket, peer);
  return peer;
}

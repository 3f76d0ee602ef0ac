import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { KubeClient } from './kube-client.ts';

/** An HTTP status for a request: 200 to serve it, else 401, 403 or 503 with nothing served. */
export type Authorize = (req: IncomingMessage) => Promise<200 | 401 | 403 | 503>;

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}
interface SubjectAccessReview {
  status?: { allowed?: boolean };
}

/**
 * Who may read a non-resource path, asked of the apiserver as controller-runtime's metrics filter and
 * kube-rbac-proxy ask it:
 *   1. a `Bearer` token, else 401;
 *   2. TokenReview: the apiserver knows the token (a service account's, a user's), else 401;
 *   3. SubjectAccessReview: that identity may `get` the path (RBAC `nonResourceURLs`), else 403.
 * Verdicts are kept `cacheMs` per token (by its hash), so a scrape every few seconds costs the
 * apiserver two requests a minute; an apiserver that does not answer gives 503 and is not cached.
 */
export function kubernetesAuthorizer(
  client: KubeClient,
  options: { path: string; logger: Logger; cacheMs?: number; maxEntries?: number },
): Authorize {
  const cacheMs = options.cacheMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 1000;
  const cache = new Map<string, { status: 200 | 401 | 403; until: number }>();

  async function decide(token: string): Promise<200 | 401 | 403> {
    const review = await client.create<TokenReview>('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    const user = review.status?.user;
    if (!review.status?.authenticated || !user?.username) return 401;
    const access = await client.create<SubjectAccessReview>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          nonResourceAttributes: { path: options.path, verb: 'get' },
        },
      },
    );
    if (access.status?.allowed) return 200;
    options.logger.info({ user: user.username, path: options.path }, 'metrics scrape refused: not allowed');
    return 403;
  }

  return async function authorize(req) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match?.[1]) return 401;
    const key = createHash('sha256').update(match[1]).digest('hex');
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.status;
    try {
      const status = await decide(match[1]);
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(key, { status, until: now + cacheMs });
      return status;
    } catch (err) {
      options.logger.warn(
        { err: (err as Error).message },
        'could not check a metrics token with the apiserver',
      );
      return 503;
    }
  };
}

import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { appCrd } from './api/v1alpha1/crd.ts';
import { CRD_NAME, FIELD_MANAGER } from './api/v1alpha1/groupversion.ts';
import { KubeApiError, type KubeClient } from './runtime/kube-client.ts';

/** Annotation on the CRD: the operator version whose schema it holds. */
export const CRD_VERSION_ANNOTATION = 'gatehouse.dev/operator-version';
export const OPERATOR_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;

/** -1, 0 or 1 for dotted numeric versions (pre-release suffixes ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split('-')[0]
      ?.split('.')
      .map((n) => Number.parseInt(n, 10) || 0) ?? [];
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d) return Math.sign(d);
  }
  return 0;
}

/**
 * The CRD upgrade path. Helm installs a chart's `crds/` once and never upgrades them, and `kubectl apply
 * -k` users forget; so the leader applies its own CRD (built in code, the same object `generate` writes)
 * when the cluster's is older than this operator (annotation `gatehouse.dev/operator-version`, absent
 * counts as older). A newer one is left alone: during a rolling upgrade an old replica must not roll the
 * schema back. RBAC lets the operator get and patch this one CRD by name, nothing else; creating it stays
 * the installer's job. Never fatal: a refusal is logged and the operator goes on with what is there.
 */
export async function upgradeCrd(
  client: KubeClient,
  logger: Logger,
  version = OPERATOR_VERSION,
): Promise<'applied' | 'current' | 'newer' | 'failed'> {
  try {
    const current = await client.getOrNull<{ metadata: { annotations?: Record<string, string> } }>(PATH);
    const theirs = current?.metadata.annotations?.[CRD_VERSION_ANNOTATION];
    if (theirs && compareVersions(theirs, version) > 0) {
      logger.info(
        { crd: CRD_NAME, theirs, ours: version },
        'the CRD is newer than this operator: left alone',
      );
      return 'newer';
    }
    const crd = appCrd();
    const desired = {
      ...crd,
      metadata: { ...crd.metadata, annotations: { [CRD_VERSION_ANNOTATION]: version } },
    };
    if (current && theirs === version) return 'current';
    await client.apply(PATH, desired, FIELD_MANAGER);
    logger.info({ crd: CRD_NAME, from: theirs ?? '(unversioned)', to: version }, 'CRD upgraded');
    return 'applied';
  } catch (err) {
    logger.warn(
      {
        crd: CRD_NAME,
        err: (err as Error).message,
        status: err instanceof KubeApiError ? err.status : undefined,
      },
      'could not upgrade the CRD: going on with the installed one',
    );
    return 'failed';
  }
}

import type { Logger } from 'pino';
import { appCrd, CRD_VERSION_ANNOTATION, OPERATOR_VERSION } from './api/v1alpha1/crd.ts';
import { CRD_NAME, FIELD_MANAGER } from './api/v1alpha1/groupversion.ts';
import { KubeApiError, type KubeClient } from './runtime/kube-client.ts';

export { CRD_VERSION_ANNOTATION, OPERATOR_VERSION };

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
 * -1, 0 or 1 for Kubernetes API versions in Kubernetes' order: v1alpha1 < v1alpha2 < v1beta1 < v1 <
 * v2alpha1. Anything that is not such a version sorts after every version (unknown counts as newer).
 */
export function compareApiVersions(a: string, b: string): number {
  const rank = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [Number.POSITIVE_INFINITY, 0, 0];
    return [Number(m[1]), m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, Number(m[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d) return Math.sign(d);
  }
  return 0;
}

interface InstalledCrd {
  metadata: { annotations?: Record<string, string> };
  spec: { versions: { name: string; storage: boolean }[] };
  status?: { storedVersions?: string[] };
}

/**
 * Why applying our CRD over the installed one would take something away, or undefined when it would
 * not: a version ours does not serve, a version etcd still holds that ours drops, or a storage version
 * later than ours (moving storage back is a migration, never a side effect of an upgrade).
 */
export function downgradeOf(installed: InstalledCrd, ours = appCrd()): string | undefined {
  const names = new Set<string>(ours.spec.versions.map((v) => v.name));
  const missing = installed.spec.versions.map((v) => v.name).filter((n) => !names.has(n));
  if (missing.length) return `it serves ${missing.join(', ')}, which this operator does not know`;
  const stored = (installed.status?.storedVersions ?? []).filter((n) => !names.has(n));
  if (stored.length) return `etcd holds Apps in ${stored.join(', ')}, which this operator's CRD drops`;
  const theirStorage = installed.spec.versions.find((v) => v.storage)?.name;
  const ourStorage = ours.spec.versions.find((v) => v.storage)?.name ?? '';
  if (theirStorage && compareApiVersions(theirStorage, ourStorage) > 0)
    return `it stores ${theirStorage}, later than this operator's ${ourStorage}`;
  return undefined;
}

export type CrdUpgrade = 'applied' | 'current' | 'newer' | 'refused' | 'foreign' | 'absent' | 'failed';

/**
 * The CRD upgrade path. Helm installs a chart's `crds/` once and never upgrades them, and `kubectl apply
 * -k` users forget; so the leader applies its own CRD (built in code, the same object `generate` writes)
 * over one that Gatehouse installed and that is older than this operator. It changes nothing, and says
 * why in its log, when the CRD:
 *   1. is absent: creating it stays the installer's job;
 *   2. has no `gatehouse.dev/operator-version` annotation: no Gatehouse manifest installed it (every
 *      copy carries the annotation), so it is not the operator's to take over;
 *   3. is newer by that annotation: during a rolling upgrade an old replica must not roll it back;
 *   4. would lose something (downgradeOf): a served or stored version, or a later storage version;
 *   5. is the same version: nothing to do.
 * RBAC lets the operator get and patch this one CRD by name, nothing else. Never fatal: the operator
 * goes on with what is installed.
 */
export async function upgradeCrd(
  client: KubeClient,
  logger: Logger,
  version = OPERATOR_VERSION,
): Promise<CrdUpgrade> {
  const log = logger.child({ crd: CRD_NAME, ours: version });
  try {
    const current = await client.getOrNull<InstalledCrd>(PATH);
    if (!current) {
      log.warn('the App CRD is not installed: install it with the chart or config/crd');
      return 'absent';
    }
    const theirs = current.metadata.annotations?.[CRD_VERSION_ANNOTATION];
    if (!theirs) {
      log.warn(
        `the App CRD has no ${CRD_VERSION_ANNOTATION} annotation, so Gatehouse did not install it: left alone (apply config/crd once to adopt it)`,
      );
      return 'foreign';
    }
    if (compareVersions(theirs, version) > 0) {
      log.info({ theirs }, 'the App CRD is newer than this operator: left alone');
      return 'newer';
    }
    const ours = appCrd();
    const loss = downgradeOf(current, ours);
    if (loss) {
      log.warn(
        { theirs },
        `the App CRD is left alone: applying this operator's would be a downgrade (${loss})`,
      );
      return 'refused';
    }
    if (theirs === version) return 'current';
    const desired = {
      ...ours,
      metadata: { ...ours.metadata, annotations: { [CRD_VERSION_ANNOTATION]: version } },
    };
    // Forced: the fields are Gatehouse's own (the installer's copy of this same object).
    await client.apply(PATH, desired, FIELD_MANAGER, true);
    log.info({ from: theirs }, 'CRD upgraded');
    return 'applied';
  } catch (err) {
    log.warn(
      {
        err: (err as Error).message,
        status: err instanceof KubeApiError ? err.status : undefined,
      },
      'could not upgrade the CRD: going on with the installed one',
    );
    return 'failed';
  }
}

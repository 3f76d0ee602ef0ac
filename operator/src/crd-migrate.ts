/**
 * The storage-version migration of the App CRD, what kube-storage-version-migrator does for one kind:
 * after a release moves the CRD's storage version, every App is written once more (etcd then holds it
 * in the new version) and the CRD's `status.storedVersions` is trimmed to that version, after which a
 * later release may stop serving the old one. A platform team runs it once per such release, with
 * rights to update Apps and the CRD's status (the operator's RBAC has neither, on purpose):
 *
 *   KUBECONFIG=... node operator/src/crd-migrate.ts
 *
 * Safe to run again, and while the operator runs: an App changed between the list and its rewrite was
 * written in the new version by that change.
 */
import { KubeConfig } from '@kubernetes/client-node';
import pino, { type Logger } from 'pino';
import { CRD_NAME, GROUP, PLURAL } from './api/v1alpha1/groupversion.ts';
import { isNotFound, KubeApiError, KubeClient } from './runtime/kube-client.ts';

const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;

interface Crd {
  spec: { versions: { name: string; storage: boolean }[] };
  status?: { storedVersions?: string[] };
}
interface Item {
  metadata: { name: string; namespace: string };
}

/**
 * Retries what the apiserver refuses for a moment (429, 503): right after a CRD changes, it answers
 * "storage is (re)initializing" for that kind until the new storage is ready.
 */
async function patiently<T>(call: () => Promise<T>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      const busy = err instanceof KubeApiError && (err.status === 429 || err.status === 503);
      if (!busy || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export interface Migration {
  storageVersion: string;
  rewritten: number;
  storedVersions: string[];
}

/** Rewrites every App in the CRD's storage version, then records that version as the only one stored. */
export async function migrateStoredVersions(client: KubeClient, logger: Logger): Promise<Migration> {
  const crd = await client.get<Crd>(CRD_PATH);
  const storageVersion = crd.spec.versions.find((v) => v.storage)?.name;
  if (!storageVersion) throw new Error(`${CRD_NAME} has no storage version`);
  const stored = crd.status?.storedVersions ?? [];
  if (stored.length === 1 && stored[0] === storageVersion)
    return { storageVersion, rewritten: 0, storedVersions: stored };
  // 1. Every App, read and written back unchanged: the apiserver encodes it in the storage version,
  //    and since those bytes differ from what etcd holds, it writes them.
  let rewritten = 0;
  let next: string | undefined;
  do {
    const page = await patiently(() =>
      client.list<Item>(`/apis/${GROUP}/${storageVersion}/${PLURAL}`, {
        limit: 200,
        ...(next ? { continue: next } : {}),
      }),
    );
    for (const item of page.items) {
      const { namespace, name } = item.metadata;
      try {
        await client.replace(
          `/apis/${GROUP}/${storageVersion}/namespaces/${namespace}/${PLURAL}/${name}`,
          item,
        );
        rewritten += 1;
      } catch (err) {
        // Changed since the list (so written in the new version already), or deleted: done either way.
        if (!(isNotFound(err) || (err instanceof KubeApiError && err.status === 409))) throw err;
      }
    }
    next = page.metadata.continue || undefined;
  } while (next);
  // 2. Only now may the old version leave storedVersions: nothing in etcd is in it any more.
  await client.request('PATCH', `${CRD_PATH}/status`, {
    body: { status: { storedVersions: [storageVersion] } },
    contentType: 'application/merge-patch+json',
  });
  logger.info({ crd: CRD_NAME, storageVersion, rewritten, was: stored }, 'App storage migrated');
  return { storageVersion, rewritten, storedVersions: [storageVersion] };
}

if (import.meta.main) {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  const logger = pino({ level: 'info' });
  migrateStoredVersions(new KubeClient(kubeConfig), logger).then(
    (m) => {
      console.log(JSON.stringify(m));
    },
    (err: Error) => {
      logger.error({ err: err.message }, 'storage migration failed');
      process.exit(1);
    },
  );
}

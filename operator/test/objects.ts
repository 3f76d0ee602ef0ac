import type { KubeClient } from '../src/runtime/kube-client.ts';

/** Any object read back from the apiserver, loosely typed for assertions. */
export interface Obj {
  metadata: {
    name: string;
    namespace?: string;
    ownerReferences?: { kind: string; name: string; uid: string }[];
    deletionTimestamp?: string;
  };
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

export const namesOf = (items: Obj[]) => items.map((o) => o.metadata.name).sort();

/** The decoded data of a Secret, or null when it does not exist. */
export async function secretData(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<Record<string, string> | null> {
  const secret = await client.getOrNull<{ data?: Record<string, string> }>(
    `/api/v1/namespaces/${namespace}/secrets/${name}`,
  );
  if (!secret) return null;
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}

/**
 * What a kubelet would report for a healthy pod: Running and Ready. There is no kubelet here, so the
 * test writes pod status itself; the ReplicaSet and Deployment controllers then count the pods as
 * available, as they would in a real cluster.
 */
export async function markPodsReady(client: KubeClient, namespace: string): Promise<number> {
  const pods = await client.list<Obj>(`/api/v1/namespaces/${namespace}/pods`);
  let marked = 0;
  const now = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  for (const pod of pods.items) {
    if (
      pod.metadata.deletionTimestamp ||
      pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
    )
      continue;
    await client.mergePatch(`/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}/status`, {
      status: {
        phase: 'Running',
        startTime: now,
        conditions: [
          { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
          { type: 'Initialized', status: 'True', lastTransitionTime: now },
          { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
          { type: 'Ready', status: 'True', lastTransitionTime: now },
        ],
      },
    });
    marked += 1;
  }
  return marked;
}

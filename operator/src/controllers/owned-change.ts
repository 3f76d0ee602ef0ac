type Obj = {
  metadata?: { generation?: number; labels?: unknown; ownerReferences?: unknown; annotations?: unknown };
  spec?: unknown;
  data?: unknown;
  status?: {
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
};

/** What of a Deployment's status the App's status reads (counts, rollout state), not its heartbeats. */
const rollout = (o: Obj) => {
  const s = o.status ?? {};
  return [
    s.replicas,
    s.updatedReplicas,
    s.availableReplicas,
    s.observedGeneration,
    (s.conditions ?? []).map((c) => [c.type, c.status, c.reason]),
  ];
};

/** How soon an App is reconciled after its Deployments' rollout state moved: the moves of that window are one reconcile. */
export const ROLLOUT_BATCH_MS = 1000;

/**
 * What an update of an object the operator owns asks of its App: `now` when its spec or data changed
 * (someone edited it: put it back at once), its labels or owners; `batched` when only what status reads
 * of a Deployment moved (replica counts, condition reasons: the Deployment controller writes these
 * several times per rollout, and one reconcile for all of them tells the same); `none` for a new
 * resourceVersion alone (managed fields, timestamps, another controller's bookkeeping).
 */
export function ownedChange(kind: string, before: Obj, after: Obj): 'now' | 'batched' | 'none' {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(before.spec ?? before.data, after.spec ?? after.data)) return 'now';
  if (before.metadata?.generation !== after.metadata?.generation) return 'now';
  if (!same(before.metadata?.labels, after.metadata?.labels)) return 'now';
  if (!same(before.metadata?.ownerReferences, after.metadata?.ownerReferences)) return 'now';
  return kind === 'Deployment' && !same(rollout(before), rollout(after)) ? 'batched' : 'none';
}

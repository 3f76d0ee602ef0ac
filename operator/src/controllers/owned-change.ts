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

/**
 * Whether an update of an object the operator owns needs its App reconciled: its spec or data changed
 * (someone edited it: put it back), its labels or owners, or, for a Deployment, what status reads of it.
 * A new resourceVersion alone (managed fields, timestamps, another controller's bookkeeping) does not.
 */
export function ownedChangeMatters(kind: string, before: Obj, after: Obj): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(before.spec ?? before.data, after.spec ?? after.data)) return true;
  if (before.metadata?.generation !== after.metadata?.generation) return true;
  if (!same(before.metadata?.labels, after.metadata?.labels)) return true;
  if (!same(before.metadata?.ownerReferences, after.metadata?.ownerReferences)) return true;
  return kind === 'Deployment' && !same(rollout(before), rollout(after));
}

/**
 * The requests to the apiserver one reconcile of an App may send, stated once: docs/operator.md quotes
 * it and operator/test/apiserver-load.test.ts holds the operator to it on a real apiserver. Watches, the
 * informers' lists and the Lease are not per reconcile and are not counted here.
 */
export const REQUEST_BUDGET = {
  /** Objects applied per region: 3 Deployments, 3 Services, 3 PodDisruptionBudgets, 1 Ingress, 2 NetworkPolicies. */
  objectsPerRegion: 12,
  /**
   * A reconcile that finds nothing to change only reads: the App (fresh, for its status), the runtime
   * Secret and each Secret the spec names (`namedSecrets`: database and standby-store references), the
   * namespace's HorizontalPodAutoscalers, and the App's pods while one of its Deployments is short of
   * replicas (to say why in Ready). The credentials Secret and the owned objects come from the watches.
   */
  unchanged: (namedSecrets: number) => 4 + namedSecrets,
  /**
   * Creating an App of `regions` regions, over all the reconciles (`passes`) its creation triggers (the
   * Deployment controller's status updates each queue it again): each object applied once, the
   * finalizer, the credentials Secret and at most two events for registering, then per pass the reads of
   * an unchanged App, one status write and up to five events (one per condition that moved).
   */
  firstPass: (regions: number, passes: number, namedSecrets = 0) =>
    regions * REQUEST_BUDGET.objectsPerRegion + 4 + passes * (REQUEST_BUDGET.unchanged(namedSecrets) + 6),
};

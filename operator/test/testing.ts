/**
 * The operator's testing entry (`@gatehouse/operator/testing`): a real etcd and kube-apiserver
 * (control-plane.ts), the operator started against them with its CRD installed (cluster.ts), and the App
 * fixtures and object helpers its own tests use; for the charts' and k8s' tests and the lab's scale bench.
 */
export * from './cluster.ts';
export * from './control-plane.ts';
export * from './fixtures.ts';
export * from './objects.ts';

import { FIELD_MANAGER } from '../../api/v1alpha1/groupversion.ts';
import { DEPLOYMENTS, HPAS, resourcePath } from '../../runtime/resources.ts';
import type { Step } from '../context.ts';
import { CHILD_TYPES, desiredObjects } from '../desired/index.ts';
import { LABEL } from '../names.ts';
import { upToDate, withIntent } from '../up-to-date.ts';

/**
 * Step 3: every region's Deployments, Services, PodDisruptionBudgets, Ingress and NetworkPolicies, by
 * server-side apply under the `gatehouse-operator` field manager (forced: the operator owns these
 * fields). A Deployment that a HorizontalPodAutoscaler scales is applied without `spec.replicas`, so
 * the operator gives up that field and never undoes the autoscaler's count (Kubernetes' advice for
 * HPA-managed workloads). An object the informer cache shows up to date (this intent, every value of
 * it) is not applied again: a reconcile that changes nothing writes nothing.
 */
export const ensureWorkloads: Step = async function ensureWorkloads(ctx, deps) {
  const namespace = ctx.app.metadata.namespace;
  const hpas = await deps.client.list<{ spec?: { scaleTargetRef?: { kind?: string; name?: string } } }>(
    resourcePath(HPAS, namespace),
  );
  const autoscaled = new Set(
    hpas.items
      .map((h) => h.spec?.scaleTargetRef)
      .filter((t) => t?.kind === 'Deployment')
      .map((t) => t?.name),
  );
  for (const { type, object } of desiredObjects(ctx.app, deps.defaults)) {
    const { name } = object.metadata;
    if (type === DEPLOYMENTS && autoscaled.has(name)) delete (object.spec as { replicas?: number }).replicas;
    const intent = withIntent(object);
    if (upToDate(intent, deps.live(type, namespace, name))) continue;
    await deps.client.apply(resourcePath(type, namespace, name), intent, FIELD_MANAGER);
  }
};

/**
 * Step 4: objects of regions the spec no longer names are deleted. Runs on every reconcile, from the
 * informer caches (no extra request), so a removal is finished even when an earlier reconcile of the
 * same generation failed half-way: it does not hang on observedGeneration.
 */
export const pruneRemovedRegions: Step = async function pruneRemovedRegions(ctx, deps) {
  const wanted = new Set(
    desiredObjects(ctx.app, deps.defaults).map((d) => `${d.object.kind}/${d.object.metadata.name}`),
  );
  for (const type of CHILD_TYPES) {
    for (const item of deps.owned(type, ctx.app.metadata.namespace)) {
      const name = item.metadata?.name ?? '';
      const labels = (item.metadata?.labels ?? {}) as Record<string, string>;
      const owners = (item.metadata?.ownerReferences ?? []) as { uid?: string }[];
      if (labels[LABEL.app] !== ctx.app.metadata.name) continue;
      if (wanted.has(`${type.kind}/${name}`) || !owners.some((o) => o.uid === ctx.app.metadata.uid)) continue;
      ctx.log.info({ kind: type.kind, name }, 'deleting an object of a removed region');
      await deps.client.delete(resourcePath(type, ctx.app.metadata.namespace, name));
    }
  }
};

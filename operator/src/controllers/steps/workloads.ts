import { FIELD_MANAGER } from '../../api/v1alpha1/groupversion.ts';
import type { KubeObject } from '../../runtime/kube-client.ts';
import { resourcePath } from '../../runtime/resources.ts';
import type { Step } from '../context.ts';
import { CHILD_TYPES, desiredObjects } from '../desired/index.ts';
import { ownedSelector } from '../names.ts';

/**
 * Step 3: every region's Deployments, Services, PodDisruptionBudgets and Ingress, by server-side apply
 * under the `gatehouse-operator` field manager (forced: the operator owns these fields; fields other
 * managers add, such as an HPA's replicas on another field, are kept). Applying an unchanged object
 * changes nothing on the server, so this runs on every reconcile.
 */
export const ensureWorkloads: Step = async function ensureWorkloads(ctx, deps) {
  for (const { type, object } of desiredObjects(ctx.app, deps.defaults)) {
    const { namespace, name } = object.metadata;
    await deps.client.apply(resourcePath(type, namespace, name), object, FIELD_MANAGER);
  }
};

/**
 * Step 4: objects of regions the spec no longer names are deleted. Runs when the spec changed since the
 * last reconcile that finished (observedGeneration behind), since only a spec change removes regions.
 */
export const pruneRemovedRegions: Step = async function pruneRemovedRegions(ctx, deps) {
  if (ctx.app.status?.observedGeneration === ctx.app.metadata.generation) return;
  const wanted = new Set(
    desiredObjects(ctx.app, deps.defaults).map((d) => `${d.object.kind}/${d.object.metadata.name}`),
  );
  for (const type of CHILD_TYPES) {
    const list = await deps.client.list<KubeObject>(resourcePath(type, ctx.app.metadata.namespace), {
      labelSelector: ownedSelector(ctx.app),
    });
    for (const item of list.items) {
      const name = item.metadata?.name ?? '';
      const owners = (item.metadata?.ownerReferences ?? []) as { uid?: string }[];
      if (wanted.has(`${type.kind}/${name}`) || !owners.some((o) => o.uid === ctx.app.metadata.uid)) continue;
      ctx.log.info({ kind: type.kind, name }, 'deleting an object of a removed region');
      await deps.client.delete(resourcePath(type, ctx.app.metadata.namespace, name));
    }
  }
};

import { FINALIZER, SKIP_CLEANUP_ANNOTATION } from '../../api/v1alpha1/groupversion.ts';
import { APPS, resourcePath, SECRETS } from '../../runtime/resources.ts';
import { AdminApiError } from '../admin-client.ts';
import type { ControllerDeps, ReconcileContext, Step } from '../context.ts';
import { credentialsSecretName } from '../names.ts';
import { EventReason } from '../reasons.ts';
import { readCredentials } from './registration.ts';

/** Writes the finalizer list with the resourceVersion read, so a concurrent change fails (409) instead of being lost. */
async function writeFinalizers(ctx: ReconcileContext, deps: ControllerDeps, finalizers: string[]) {
  const { namespace, name, resourceVersion } = ctx.app.metadata;
  const updated = await deps.client.mergePatch<{
    metadata: { resourceVersion: string; finalizers?: string[] };
  }>(resourcePath(APPS, namespace, name), { metadata: { finalizers, resourceVersion } });
  ctx.app.metadata.resourceVersion = updated.metadata.resourceVersion;
  ctx.app.metadata.finalizers = updated.metadata.finalizers ?? [];
}

/** Step 1: the finalizer goes on before anything is registered, so nothing can outlive the App unnoticed. */
export const ensureFinalizer: Step = async function ensureFinalizer(ctx, deps) {
  const finalizers = ctx.app.metadata.finalizers ?? [];
  if (skipsCleanup(ctx)) {
    if (finalizers.includes(FINALIZER))
      await writeFinalizers(
        ctx,
        deps,
        finalizers.filter((f) => f !== FINALIZER),
      );
    return;
  }
  if (finalizers.includes(FINALIZER)) return;
  await writeFinalizers(ctx, deps, [...finalizers, FINALIZER]);
};

const skipsCleanup = (ctx: ReconcileContext) =>
  ctx.app.metadata.annotations?.[SKIP_CLEANUP_ANNOTATION] === 'true';

/**
 * Deletion: stop probing, disable the app in the service's database (its record stays, for audit and
 * for validation of tokens already issued to be refused cleanly), then let the App go. The children
 * go with it through their owner references (kube-controller-manager's garbage collector).
 */
export const finalize: Step = async function finalize(ctx, deps) {
  deps.prober.forget(ctx.key);
  for (const region of ctx.app.spec.regions) {
    const labels = { namespace: ctx.app.metadata.namespace, app: ctx.app.metadata.name, region: region.name };
    deps.metrics.mainHealthy.remove(labels);
    deps.metrics.standbyServing.remove(labels);
  }
  for (const key of deps.memory.standbyModes.keys())
    if (key.startsWith(`${ctx.key}/`)) deps.memory.standbyModes.delete(key);
  const finalizers = ctx.app.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return;
  let appKey = ctx.app.status?.appKey;
  if (!appKey) {
    const secret = await deps.client.getOrNull<{ data?: Record<string, string> }>(
      resourcePath(SECRETS, ctx.app.metadata.namespace, credentialsSecretName(ctx.app)),
    );
    appKey = readCredentials(secret)?.appKey;
  }
  const skip = (why: string) => {
    deps.recorder.event(
      ctx.app,
      'Warning',
      EventReason.CleanupSkipped,
      `App ${appKey ?? '(never registered)'} left enabled in the service: ${why}`,
    );
    ctx.log.warn({ appKey, why }, 'deletion goes ahead without disabling the app in the service');
  };
  if (skipsCleanup(ctx)) {
    if (appKey) skip(`annotation ${SKIP_CLEANUP_ANNOTATION}=true`);
  } else if (appKey) {
    try {
      if (await deps.admin.get(appKey)) {
        await deps.admin.setDisabled(appKey, true);
        deps.recorder.event(
          ctx.app,
          'Normal',
          EventReason.AppDisabled,
          `App ${appKey} disabled in the service: the App is being deleted`,
        );
        ctx.log.info({ appKey }, 'app disabled in the service');
      }
    } catch (err) {
      // Retried with backoff, but not forever: a deletion (and `helm uninstall`) must end.
      const waited = Date.now() - Date.parse(ctx.app.metadata.deletionTimestamp ?? '');
      if (!(err instanceof AdminApiError) || !(waited >= deps.cleanupTimeoutMs)) throw err;
      skip(`the admin API failed for ${Math.round(waited / 1000)} s (${err.message})`);
    }
  }
  deps.memory.pendingCredentials.delete(ctx.app.metadata.uid);
  deps.memory.verifiedSettings.delete(ctx.app.metadata.uid);
  await writeFinalizers(
    ctx,
    deps,
    finalizers.filter((f) => f !== FINALIZER),
  );
};

import type { StandbyMode } from '../../health/standby-switch.ts';
import type { ControllerDeps, ReconcileContext, Step } from '../context.ts';
import { EventReason } from '../reasons.ts';

/** Where the operator probes a region's main API: `probeUrl`, else the public API host. */
export const probeUrlOf = (region: { probeUrl?: string; hosts: { api: string } }) =>
  (region.probeUrl ?? `https://${region.hosts.api}`).replace(/\/+$/, '');

/** Step 5: the prober probes exactly the regions of the spec. */
export const ensureProbes: Step = async function ensureProbes(ctx, deps) {
  deps.prober.sync(
    ctx.key,
    ctx.app.spec.regions.map((r) => ({ name: r.name, url: probeUrlOf(r) })),
  );
};

/** The mode last acknowledged for a region: memory, else what the status said before a restart. */
function lastMode(ctx: ReconcileContext, deps: ControllerDeps, region: string) {
  const remembered = deps.memory.standbyModes.get(`${ctx.key}/${region}`);
  if (remembered) return remembered;
  const status = ctx.app.status?.regions?.find((r) => r.name === region);
  const at = status?.lastSwitchTime ? new Date(status.lastSwitchTime) : undefined;
  return { mode: (status?.serving === 'standby' ? 'serve' : 'auto') as StandbyMode, at };
}

/**
 * Step 6: traffic follows the probes. A region whose main API is down (failAfter probes in a row) has
 * its standby told to `serve`, again every standbyReassertMs while it lasts (pods restart); once the
 * main API is back (recoverAfter probes in a row) the standby goes back to `auto`, where its own
 * probes find the main API up and it answers `service_online`. With no verdict yet (just started),
 * the last decision stands.
 */
export const ensureTrafficMode: Step = async function ensureTrafficMode(ctx, deps) {
  for (const region of ctx.app.spec.regions) {
    const memoKey = `${ctx.key}/${region.name}`;
    const health = deps.prober.health(ctx.key, region.name);
    const last = lastMode(ctx, deps, region.name);
    const want: StandbyMode = health?.healthy === undefined ? last.mode : health.healthy ? 'auto' : 'serve';
    const labels = { namespace: ctx.app.metadata.namespace, app: ctx.app.metadata.name, region: region.name };
    if (health?.healthy !== undefined) deps.metrics.mainHealthy.set(labels, health.healthy ? 1 : 0);
    let current = last;
    let note = '';
    let unheard = false;
    if (want === 'serve' || last.mode !== want) {
      // While serving, a reconcile re-tells only the processes that have not heard 'serve' lately (new
      // or restarted pods); the reassert timer (standbyReassertMs) re-tells all of them.
      const result = await deps.standby.setMode(ctx.app, region.name, want, {
        fresherThanMs: last.mode === want ? deps.standbyReassertMs / 2 : undefined,
      });
      note = `${result.acknowledged}/${result.total} standby processes acknowledged '${want}'`;
      // No process reached is not "all acknowledged": a failed or empty EndpointSlice list (the slice
      // controller lagging, a pod not yet listed, RBAC) must not record a switch nobody heard. The
      // standby serves once one process took 'serve'; going back needs every one.
      const complete = result.total > 0 && result.acknowledged === result.total;
      if (want === 'serve' ? result.acknowledged > 0 : complete)
        current = last.mode === want ? last : { mode: want, at: new Date() as Date | undefined };
      unheard = want === 'serve' && current.mode !== 'serve';
      if (!complete) {
        ctx.log.warn(
          { region: region.name, mode: want, errors: result.errors },
          'some standby processes did not take the mode',
        );
        ctx.requeueAfter(Math.min(deps.standbyReassertMs, 5000));
      }
      if (current.mode !== last.mode) {
        const failed = `${health?.failures ?? 0} failed probes of ${region.probeUrl ?? region.hosts.api}${
          health?.damped ? '; flapping, so traffic returns only after the flap hold of good probes' : ''
        }`;
        if (want === 'serve') {
          deps.recorder.event(
            ctx.app,
            'Warning',
            EventReason.StandbyActivated,
            `Region ${region.name}: main API down (${failed}); standby told to serve (${note})`,
          );
        } else {
          deps.recorder.event(
            ctx.app,
            'Normal',
            EventReason.MainApiRecovered,
            `Region ${region.name}: main API healthy again; standby back to auto (${note})`,
          );
        }
      }
    }
    deps.memory.standbyModes.set(memoKey, current);
    deps.metrics.standbyServing.set(labels, current.mode === 'serve' ? 1 : 0);
    if (current.mode === 'serve') ctx.requeueAfter(deps.standbyReassertMs);
    ctx.traffic.set(region.name, {
      serving: current.mode === 'serve' ? 'standby' : unheard ? 'none' : 'main',
      since: current.at,
      message: note,
    });
  }
};

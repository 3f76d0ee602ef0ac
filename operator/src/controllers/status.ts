import { isDeepStrictEqual } from 'node:util';
import type { App, AppStatus, RegionStatus } from '../api/v1alpha1/app-types.ts';
import type { RegionHealth } from '../health/prober.ts';
import { type ConditionInput, findCondition, metaTime, setCondition } from './conditions.ts';
import type { ObservedDeployment, RegionTraffic } from './context.ts';
import { urlsOf } from './desired/deployment.ts';
import { ROLES, type Role, workloadName } from './names.ts';
import { Reason } from './reasons.ts';

export interface StatusInputs {
  app: App;
  now: Date;
  appKey: string | undefined;
  secretName: string;
  /** undefined: keep the previous Registered condition (the step did not run). */
  registered: ConditionInput | undefined;
  deployment(name: string): ObservedDeployment | undefined;
  health(region: string): RegionHealth | undefined;
  traffic(region: string): RegionTraffic | undefined;
  /** A hard failure of a step, or a soft one worth showing. */
  problem: string | undefined;
  /**
   * A step failed hard (later steps did not run): Ready is False, and observedGeneration stays where it
   * was, since this generation was not carried out.
   */
  failed?: boolean;
  probeStatusRefreshMs: number;
  /** What the pods of an unavailable Deployment say (waiting reasons, unschedulable), by Deployment name. */
  podReasons?: (deployment: string) => string | undefined;
  /** The spec cannot be carried out as written (steps/preflight.ts): why. Nothing was rendered. */
  invalid?: string;
}

const deploymentCondition = (d: ObservedDeployment | undefined, type: string) =>
  d?.status?.conditions?.find((c) => c.type === type);

/**
 * A Deployment that has not finished rolling out its current spec (or was not seen yet). Once the
 * Deployment controller has seen this spec fully available (Progressing reason NewReplicaSetAvailable),
 * pods going unready later are an outage, not a rollout: Ready says so, Progressing does not.
 */
function rolloutPending(d: ObservedDeployment | undefined): string | null {
  if (!d) return 'not created yet';
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  if ((s.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) return 'spec change not yet observed';
  if ((s.updatedReplicas ?? 0) < want) return `${s.updatedReplicas ?? 0}/${want} replicas updated`;
  if ((s.replicas ?? 0) > want) return `${(s.replicas ?? 0) - want} old replicas still running`;
  const progressing = deploymentCondition(d, 'Progressing');
  if (progressing?.reason === 'NewReplicaSetAvailable') return null;
  if ((s.availableReplicas ?? 0) < want) {
    const stuck = progressing?.status === 'False' ? ` (${progressing.reason}: ${progressing.message})` : '';
    return `${s.availableReplicas ?? 0}/${want} replicas available${stuck}`;
  }
  return null;
}

/** Why a Deployment has fewer available replicas than it wants, from its own conditions and its pods. */
function whyUnavailable(d: ObservedDeployment | undefined, pods: string | undefined): string {
  if (!d) return 'not created yet';
  const parts = [`${d.status?.availableReplicas ?? 0}/${d.spec?.replicas ?? 1} available`];
  for (const type of ['ReplicaFailure', 'Progressing', 'Available']) {
    const c = deploymentCondition(d, type);
    const bad = type === 'ReplicaFailure' ? c?.status === 'True' : c?.status === 'False';
    if (c && bad) parts.push(`${type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`.trim());
  }
  if (pods) parts.push(`pods: ${pods}`);
  return parts.join('; ');
}

function regionStatus(inputs: StatusInputs, name: string, previous: RegionStatus | undefined): RegionStatus {
  const region = inputs.app.spec.regions.find((r) => r.name === name);
  if (!region) throw new Error(`unknown region ${name}`);
  const available = (role: Role) =>
    inputs.deployment(workloadName(inputs.app, name, role))?.status?.availableReplicas ?? 0;
  const health = inputs.health(name);
  const traffic = inputs.traffic(name);
  const out: RegionStatus = {
    name,
    endpoints: {
      api: `https://${region.hosts.api}`,
      bypass: urlsOf(region.hosts.bypass),
      fallback: urlsOf(region.hosts.fallback),
    },
    availableReplicas: {
      api: available('api'),
      bypass: available('bypass'),
      fallback: available('fallback'),
    },
    serving: traffic?.serving ?? previous?.serving ?? 'main',
  };
  const healthy = health?.healthy ?? previous?.mainHealthy;
  if (healthy !== undefined) out.mainHealthy = healthy;
  const since = traffic?.since ?? (previous?.lastSwitchTime ? new Date(previous.lastSwitchTime) : undefined);
  if (since) out.lastSwitchTime = metaTime(since);
  // lastProbeTime is not a heartbeat: refreshed with other changes, or when older than the refresh period.
  const probed = health?.lastProbeAt;
  const before = previous?.lastProbeTime;
  if (probed) {
    const stale = !before || probed.getTime() - new Date(before).getTime() >= inputs.probeStatusRefreshMs;
    const others = previous && { ...previous, lastProbeTime: undefined };
    const changed = !isDeepStrictEqual(
      JSON.parse(JSON.stringify({ ...out, lastProbeTime: undefined })),
      JSON.parse(JSON.stringify(others ?? {})),
    );
    out.lastProbeTime = stale || changed ? metaTime(probed) : before;
  } else if (before) {
    out.lastProbeTime = before;
  }
  return out;
}

/** The App's status from what the steps observed; conditions move only through setCondition. */
export function computeStatus(inputs: StatusInputs): AppStatus {
  const { app, now } = inputs;
  const gen = app.metadata.generation;
  const prev = app.status ?? {};
  const regions = app.spec.regions.map((r) =>
    regionStatus(
      inputs,
      r.name,
      prev.regions?.find((p) => p.name === r.name),
    ),
  );
  let conditions = prev.conditions ?? [];
  const set = (c: ConditionInput) => {
    conditions = setCondition(conditions, c, gen, now);
  };

  if (inputs.registered) set(inputs.registered);
  const registered = findCondition(conditions, 'Registered');
  if (!registered)
    set({
      type: 'Registered',
      status: 'Unknown',
      reason: Reason.NotRegistered,
      message: 'Not registered yet',
    });

  const pending = app.spec.regions.flatMap((r) =>
    ROLES.flatMap((role) => {
      const name = workloadName(app, r.name, role);
      const why = rolloutPending(inputs.deployment(name));
      return why ? [`${name}: ${why}`] : [];
    }),
  );
  set(
    pending.length
      ? { type: 'Progressing', status: 'True', reason: Reason.RollingOut, message: pending.join('; ') }
      : {
          type: 'Progressing',
          status: 'False',
          reason: Reason.RolloutComplete,
          message: 'Every Deployment runs the current spec',
        },
  );

  const onStandby = regions.filter((r) => r.serving === 'standby').map((r) => r.name);
  const unserved = app.spec.regions
    .filter((r) => inputs.traffic(r.name)?.serving === 'none')
    .map((r) => `${r.name} (${inputs.traffic(r.name)?.message || 'no standby process listed'})`);
  set(
    unserved.length
      ? {
          type: 'StandbyServing',
          status: 'False',
          reason: Reason.StandbyUnreachable,
          message: `Main API down and no standby serving in ${unserved.join(', ')}`,
        }
      : onStandby.length
        ? {
            type: 'StandbyServing',
            status: 'True',
            reason: Reason.MainApiUnhealthy,
            message: `Standby serving in ${onStandby.join(', ')}: main API failed its probes`,
          }
        : {
            type: 'StandbyServing',
            status: 'False',
            reason: Reason.MainApiServing,
            message: 'Every region is served by its main API',
          },
  );

  const down = regions.filter((r) => r.mainHealthy === false).map((r) => r.name);
  if (inputs.invalid)
    set({ type: 'Degraded', status: 'True', reason: Reason.InvalidSpec, message: inputs.invalid });
  else if (inputs.problem)
    set({ type: 'Degraded', status: 'True', reason: Reason.ReconcileError, message: inputs.problem });
  else if (down.length)
    set({
      type: 'Degraded',
      status: 'True',
      reason: Reason.MainApiDown,
      message: `Main API down in ${down.join(', ')}`,
    });
  else
    set({ type: 'Degraded', status: 'False', reason: Reason.AsExpected, message: 'Nothing needs attention' });

  const unavailable = app.spec.regions.flatMap((r) =>
    ROLES.map((role) => workloadName(app, r.name, role))
      .filter((name) => {
        const d = inputs.deployment(name);
        return (d?.status?.availableReplicas ?? 0) < (d?.spec?.replicas ?? 1);
      })
      .map((name) => `${name} (${whyUnavailable(inputs.deployment(name), inputs.podReasons?.(name))})`),
  );
  const isRegistered = findCondition(conditions, 'Registered')?.status === 'True';
  if (app.spec.disabled)
    set({ type: 'Ready', status: 'False', reason: Reason.AppDisabled, message: 'spec.disabled is true' });
  else if (inputs.invalid)
    set({ type: 'Ready', status: 'False', reason: Reason.InvalidSpec, message: inputs.invalid });
  else if (inputs.failed)
    set({ type: 'Ready', status: 'False', reason: Reason.ReconcileError, message: inputs.problem ?? '' });
  else if (!isRegistered)
    set({
      type: 'Ready',
      status: 'False',
      reason: Reason.NotRegistered,
      message: findCondition(conditions, 'Registered')?.message ?? '',
    });
  else if (unserved.length)
    set({
      type: 'Ready',
      status: 'False',
      reason: Reason.StandbyUnreachable,
      message: `Main API down and no standby serving in ${unserved.join(', ')}`,
    });
  else if (onStandby.length)
    set({
      type: 'Ready',
      status: 'False',
      reason: Reason.RegionOnStandby,
      message: `Served by the standby: ${onStandby.join(', ')}`,
    });
  else if (unavailable.length)
    set({
      type: 'Ready',
      status: 'False',
      reason: Reason.WorkloadsUnavailable,
      message: `Not available: ${unavailable.join(', ')}`,
    });
  else
    set({
      type: 'Ready',
      status: 'True',
      reason: Reason.AllRegionsServing,
      message: 'Registered; every region served by its main API',
    });

  const order = ['Ready', 'Registered', 'Progressing', 'Degraded', 'StandbyServing'];
  conditions = [...conditions].sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
  const observed = inputs.failed || inputs.invalid ? prev.observedGeneration : gen;
  const status: AppStatus = { conditions, regions };
  if (observed !== undefined) status.observedGeneration = observed;
  const appKey = inputs.appKey ?? prev.appKey;
  if (appKey) status.appKey = appKey;
  status.credentialsSecret = inputs.secretName;
  return status;
}

/** Status writes only when something changed (JSON equality: undefined fields do not count). */
export const statusChanged = (before: AppStatus | undefined, after: AppStatus) =>
  !isDeepStrictEqual(JSON.parse(JSON.stringify(before ?? {})), JSON.parse(JSON.stringify(after)));

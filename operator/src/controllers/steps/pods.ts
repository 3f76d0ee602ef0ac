import { PODS, resourcePath } from '../../runtime/resources.ts';
import type { Step } from '../context.ts';
import { LABEL, ROLES, selectorLabels, workloadName } from '../names.ts';

interface Pod {
  metadata?: { deletionTimestamp?: string; labels?: Record<string, string> };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      ready?: boolean;
      state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string } };
      lastState?: { terminated?: { reason?: string; exitCode?: number } };
    }[];
  };
}

const short = (text: string | undefined) => (text && text.length > 160 ? `${text.slice(0, 157)}...` : text);

/** One line for a pod that is not ready: what a person would read first in `kubectl describe pod`. */
export function podProblem(pod: Pod): string {
  const s = pod.status ?? {};
  const scheduled = s.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False')
    return `${scheduled.reason ?? 'Unschedulable'}: ${short(scheduled.message)}`;
  if (s.phase === 'Pending' && !scheduled) return 'Pending, not scheduled';
  for (const c of s.containerStatuses ?? []) {
    const waiting = c.state?.waiting;
    if (waiting?.reason) {
      const last = c.lastState?.terminated;
      const exit = last
        ? ` (last exit ${last.reason ?? ''} ${last.exitCode ?? ''})`.replace(/ +\)/, ')')
        : '';
      return `${waiting.reason}${exit}${waiting.message ? `: ${short(waiting.message)}` : ''}`;
    }
    if (c.state?.terminated?.reason) return `terminated: ${c.state.terminated.reason}`;
  }
  return s.phase === 'Running' ? 'running, not ready (readiness probe failing)' : (s.phase ?? 'unknown');
}

/**
 * Step 7: for each Deployment with fewer available replicas than it wants (an outage or a stuck
 * rollout), the reasons its pods give, counted, for Ready's message. One list of the App's pods per
 * reconcile while some Deployment is short, none while everything is available.
 */
export const explainUnavailable: Step = async function explainUnavailable(ctx, deps) {
  const { app } = ctx;
  const short = app.spec.regions.flatMap((region) =>
    ROLES.map((role) => ({ region: region.name, role, name: workloadName(app, region.name, role) })).filter(
      ({ name }) => {
        const d = deps.deployment(`${app.metadata.namespace}/${name}`);
        return d && (d.status?.availableReplicas ?? 0) < (d.spec?.replicas ?? 1);
      },
    ),
  );
  if (!short.length) return;
  const pods = await deps.client.list<Pod>(resourcePath(PODS, app.metadata.namespace), {
    labelSelector: `${LABEL.app}=${app.metadata.name}`,
  });
  for (const { region, role, name } of short) {
    const selector = Object.entries(selectorLabels(app, region, role));
    const mine = pods.items.filter((pod) => selector.every(([k, v]) => pod.metadata?.labels?.[k] === v));
    const counts = new Map<string, number>();
    for (const pod of mine) {
      if (pod.metadata?.deletionTimestamp) continue;
      if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
      const problem = podProblem(pod);
      counts.set(problem, (counts.get(problem) ?? 0) + 1);
    }
    ctx.podReasons.set(
      name,
      counts.size
        ? [...counts].map(([problem, n]) => `${n} ${problem}`).join(', ')
        : mine.length
          ? 'every pod ready, not yet available (minReadySeconds)'
          : 'no pods',
    );
  }
};

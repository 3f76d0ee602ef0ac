import { describe, expect, it } from 'vitest';
import { makeApp } from '../../test/fixtures.ts';
import { findCondition } from './conditions.ts';
import type { ObservedDeployment } from './context.ts';
import { computeStatus, type StatusInputs, statusChanged } from './status.ts';

const t0 = new Date('2026-03-01T10:00:00Z');
const registered = {
  type: 'Registered' as const,
  status: 'True' as const,
  reason: 'AppRegistered' as const,
  message: 'ok',
};
const available = (n: number): ObservedDeployment => ({
  metadata: { name: 'x', generation: 1 },
  spec: { replicas: n },
  status: { observedGeneration: 1, replicas: n, updatedReplicas: n, availableReplicas: n },
});
const pendingPods = (n: number): ObservedDeployment => ({
  metadata: { name: 'x', generation: 1 },
  spec: { replicas: n },
  status: { observedGeneration: 1, replicas: n, updatedReplicas: n },
});

function inputs(over: Partial<StatusInputs> = {}): StatusInputs {
  return {
    app: makeApp(),
    now: t0,
    appKey: 'ak_test',
    secretName: 'shop-credentials',
    registered,
    deployment: () => available(2),
    health: () => ({ healthy: true, lastProbeAt: t0, failures: 0, successes: 5 }),
    traffic: () => ({ serving: 'main', since: undefined, message: '' }),
    problem: undefined,
    probeStatusRefreshMs: 60_000,
    ...over,
  };
}

describe('computeStatus', () => {
  it('Ready when registered, available and served by main; per-region endpoints and counts', () => {
    const s = computeStatus(inputs());
    expect(findCondition(s.conditions, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'AllRegionsServing',
    });
    expect(s.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=True',
      'Registered=True',
      'Progressing=False',
      'Degraded=False',
      'StandbyServing=False',
    ]);
    expect(s).toMatchObject({
      observedGeneration: 1,
      appKey: 'ak_test',
      credentialsSecret: 'shop-credentials',
    });
    expect(s.regions?.[0]).toEqual({
      name: 'eu',
      endpoints: {
        api: 'https://api.eu.shop.example',
        bypass: ['https://bypass.a.eu.shop.example', 'https://bypass.b.eu.shop.example'],
        fallback: ['https://fallbackapiv1.a.eu.shop.example', 'https://fallbackapiv1.b.eu.shop.example'],
      },
      availableReplicas: { api: 2, bypass: 2, fallback: 2 },
      serving: 'main',
      mainHealthy: true,
      lastProbeTime: '2026-03-01T10:00:00Z',
    });
  });

  it('pods that never run (no kubelet): Progressing=True RollingOut, Ready=False WorkloadsUnavailable', () => {
    const s = computeStatus(inputs({ deployment: () => pendingPods(2) }));
    expect(findCondition(s.conditions, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'RollingOut',
    });
    expect(findCondition(s.conditions, 'Progressing')?.message).toContain(
      'shop-eu-api: 0/2 replicas available',
    );
    expect(findCondition(s.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WorkloadsUnavailable',
    });
  });

  it('an outage after a finished rollout is not a rollout: Progressing=False, Ready says why', () => {
    const outage: ObservedDeployment = {
      metadata: { name: 'x', generation: 1 },
      spec: { replicas: 2 },
      status: {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        availableReplicas: 0,
        conditions: [
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'done' },
          {
            type: 'Available',
            status: 'False',
            reason: 'MinimumReplicasUnavailable',
            message: 'Deployment does not have minimum availability.',
          },
        ],
      },
    };
    const s = computeStatus(
      inputs({
        deployment: (name) => (name === 'shop-eu-api' ? outage : available(2)),
        podReasons: (name) => (name === 'shop-eu-api' ? '2 CrashLoopBackOff (last exit Error 1)' : undefined),
      }),
    );
    expect(findCondition(s.conditions, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'RolloutComplete',
    });
    expect(findCondition(s.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WorkloadsUnavailable',
      message:
        'Not available: shop-eu-api (0/2 available; Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability.; pods: 2 CrashLoopBackOff (last exit Error 1))',
    });
  });

  it('main API down and no standby acknowledged: serving none, StandbyServing=False, Ready=False StandbyUnreachable', () => {
    const s = computeStatus(
      inputs({
        health: (r) => ({ healthy: r !== 'eu', lastProbeAt: t0, failures: 3, successes: 0 }),
        traffic: (r) =>
          r === 'eu'
            ? { serving: 'none', since: undefined, message: "0/0 standby processes acknowledged 'serve'" }
            : { serving: 'main', since: undefined, message: '' },
      }),
    );
    expect(s.regions?.[0]?.serving).toBe('none');
    expect(findCondition(s.conditions, 'StandbyServing')).toMatchObject({
      status: 'False',
      reason: 'StandbyUnreachable',
      message: "Main API down and no standby serving in eu (0/0 standby processes acknowledged 'serve')",
    });
    expect(findCondition(s.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'StandbyUnreachable',
    });
    expect(findCondition(s.conditions, 'Degraded')).toMatchObject({ status: 'True', reason: 'MainApiDown' });
  });

  it('a region on its standby: StandbyServing=True, Degraded=True MainApiDown, Ready=False RegionOnStandby', () => {
    const since = new Date('2026-03-01T09:59:00Z');
    const s = computeStatus(
      inputs({
        health: (r) => ({ healthy: r !== 'us', lastProbeAt: t0, failures: 3, successes: 0 }),
        traffic: (r) => ({
          serving: r === 'us' ? 'standby' : 'main',
          since: r === 'us' ? since : undefined,
          message: '',
        }),
      }),
    );
    expect(findCondition(s.conditions, 'StandbyServing')).toMatchObject({
      status: 'True',
      message: expect.stringContaining('us'),
    });
    expect(findCondition(s.conditions, 'Degraded')).toMatchObject({ status: 'True', reason: 'MainApiDown' });
    expect(findCondition(s.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'RegionOnStandby',
    });
    expect(s.regions?.[1]).toMatchObject({
      name: 'us',
      serving: 'standby',
      mainHealthy: false,
      lastSwitchTime: '2026-03-01T09:59:00Z',
    });
  });

  it('a failed step shows as Degraded=True ReconcileError; no registration verdict keeps the old one', () => {
    const first = computeStatus(inputs());
    const app = { ...makeApp(), status: first };
    const s = computeStatus(
      inputs({
        app,
        registered: undefined,
        problem: 'ensureWorkloads: forbidden',
        now: new Date('2026-03-01T11:00:00Z'),
      }),
    );
    expect(findCondition(s.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ReconcileError',
      message: 'ensureWorkloads: forbidden',
    });
    expect(findCondition(s.conditions, 'Registered')).toEqual(findCondition(first.conditions, 'Registered'));
  });

  it('a step that failed hard: Ready=False ReconcileError, and observedGeneration does not advance', () => {
    const first = computeStatus(inputs());
    const app = { ...makeApp(), status: first };
    app.metadata = { ...app.metadata, generation: 2 };
    const s = computeStatus(
      inputs({
        app,
        problem: 'ensureWorkloads: denied by a policy',
        failed: true,
        now: new Date('2026-03-01T11:00:00Z'),
      }),
    );
    expect(findCondition(s.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ReconcileError',
      message: 'ensureWorkloads: denied by a policy',
    });
    expect(s.observedGeneration).toBe(1);
    const fixed = computeStatus(
      inputs({ app: { ...app, status: s }, now: new Date('2026-03-01T11:01:00Z') }),
    );
    expect(fixed.observedGeneration).toBe(2);
    expect(findCondition(fixed.conditions, 'Ready')).toMatchObject({ status: 'True' });
  });

  it('is stable: recomputing from its own output changes nothing, and lastProbeTime is not a heartbeat', () => {
    const first = computeStatus(inputs());
    const app = { ...makeApp(), status: first };
    const later = new Date(t0.getTime() + 30_000);
    const again = computeStatus(
      inputs({
        app,
        now: later,
        health: () => ({ healthy: true, lastProbeAt: later, failures: 0, successes: 9 }),
      }),
    );
    expect(statusChanged(first, again)).toBe(false);
    const muchLater = new Date(t0.getTime() + 61_000);
    const refreshed = computeStatus(
      inputs({
        app,
        now: muchLater,
        health: () => ({ healthy: true, lastProbeAt: muchLater, failures: 0, successes: 30 }),
      }),
    );
    expect(statusChanged(first, refreshed)).toBe(true);
    expect(refreshed.regions?.[0]?.lastProbeTime).toBe('2026-03-01T10:01:01Z');
    expect(findCondition(refreshed.conditions, 'Ready')?.lastTransitionTime).toBe('2026-03-01T10:00:00Z');
  });
});

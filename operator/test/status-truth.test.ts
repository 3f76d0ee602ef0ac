import { describe, expect, it } from 'vitest';
import { applyApp, condition, eventually, getApp } from './cluster.ts';
import { controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';
import { useOperatorWithApi } from './operator-with-api.ts';

const NS = 'truth';

/** Status says what is true: a standby nobody reached is not serving. */
describe.runIf(controlPlaneAvailable())('Truthful App status on a real kube-apiserver', () => {
  const f = useOperatorWithApi({
    namespaces: [NS],
    config: { standbyToken: 'sync' },
    // The main API is down and no standby pod is listed (none ever started): nobody can serve.
    operator: { probe: async () => false },
  });

  it('main API down and no standby acknowledged: serving none, Ready=False StandbyUnreachable, Warning events', async () => {
    await applyApp(f.admin, NS, 'dark', appSpec({ regions: [region('eu')] }));
    const app = await eventually('the verdict in status', async () => {
      const a = await getApp(f.admin, NS, 'dark');
      return a?.status?.regions?.[0]?.mainHealthy === false && a;
    });
    expect(app.status?.regions?.[0]?.serving).toBe('none');
    expect(condition(app, 'StandbyServing')).toMatchObject({
      status: 'False',
      reason: 'StandbyUnreachable',
      message: "Main API down and no standby serving in eu (0/0 standby processes acknowledged 'serve')",
    });
    expect(condition(app, 'Ready')).toMatchObject({ status: 'False', reason: 'StandbyUnreachable' });
    expect(condition(app, 'Degraded')).toMatchObject({ status: 'True', reason: 'MainApiDown' });
    const warnings = await eventually('the StandbyUnreachable event', async () => {
      const events = await f.admin.list<{ reason: string; type: string; count?: number }>(
        `/api/v1/namespaces/${NS}/events`,
      );
      const found = events.items.filter((e) => e.reason === 'StandbyUnreachable');
      return found.length > 0 && found;
    });
    expect(warnings.every((e) => e.type === 'Warning')).toBe(true);
    expect(
      (await f.admin.list<{ reason: string }>(`/api/v1/namespaces/${NS}/events`)).items.map((e) => e.reason),
    ).not.toContain('StandbyActivated');
  });
});

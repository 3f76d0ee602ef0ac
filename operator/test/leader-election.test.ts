import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../src/manager.ts';
import type { KubeClient } from '../src/runtime/kube-client.ts';
import { DEPLOYMENTS, LEASES, resourcePath } from '../src/runtime/resources.ts';
import {
  applyApp,
  createNamespace,
  eventually,
  startClusterWithOperator,
  startOperator,
  testConfig,
} from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';

const NS = 'tenants';
type Lease = { spec: { holderIdentity?: string; leaseTransitions?: number } };

describe.runIf(controlPlaneAvailable())(
  'operator replicas: one leader on a Lease, another takes over',
  () => {
    let cp: ControlPlane;
    let admin: KubeClient;
    let api: TestApi;
    const managers: Manager[] = [];
    const stopped = new Set<Manager>();
    const lease = () =>
      admin.getOrNull<Lease>(resourcePath(LEASES, 'gatehouse-system', 'gatehouse-operator-leader'));
    const health = async (m: Manager, path: string) => (await fetch(`${m.healthUrl}${path}`)).status;
    const deploymentsOf = async (app: string) =>
      (await admin.list<{ metadata: { name: string } }>(resourcePath(DEPLOYMENTS, NS))).items.filter((d) =>
        d.metadata.name.startsWith(`${app}-`),
      );

    beforeAll(async () => {
      ({ cp, admin } = await startClusterWithOperator());
      await createNamespace(admin, NS);
      api = await startTestApi();
      for (const name of ['replica-a', 'replica-b', 'replica-c']) {
        const config = testConfig(api.url, api.runtime.adminToken);
        config.leaderElection.identity = name;
        managers.push(
          await startOperator(cp.kubeConfig('operator'), config, {
            probe: async () => true,
            standbyTargets: async () => [],
          }),
        );
      }
    }, 300_000);
    afterAll(async () => {
      await Promise.all(managers.map((m) => m.stop()));
      await api?.close();
      await cp?.stop();
    }, 60_000);

    it('elects exactly one leader, which is the Lease holder; every replica is healthy and ready', async () => {
      const held = await eventually('a Lease holder', async () => (await lease())?.spec.holderIdentity);
      await new Promise((r) => setTimeout(r, 1500));
      expect(managers.filter((m) => m.isLeader).map((m) => m.identity)).toEqual([held]);
      expect((await lease())?.spec.holderIdentity).toBe(held);
      for (const m of managers) {
        expect(await health(m, '/healthz')).toBe(200);
        expect(await health(m, '/readyz')).toBe(200);
      }
      const metrics = await (await fetch(`${managers.find((m) => m.isLeader)?.metricsUrl}/metrics`)).text();
      expect(metrics).toMatch(/^gatehouse_operator_leader 1$/m);
    });

    it('only the leader reconciles; when it stops (releasing the Lease), another takes over at once and carries on', async () => {
      await applyApp(admin, NS, 'first', appSpec({ regions: [region('eu')] }));
      await eventually('the first App reconciled', async () => (await deploymentsOf('first')).length === 3);
      const leader = managers.find((m) => m.isLeader) as Manager;
      const transitions = (await lease())?.spec.leaseTransitions ?? 0;
      const stoppedAt = Date.now();
      stopped.add(leader);
      await leader.stop();
      const next = await eventually('another replica to lead', async () => {
        const holder = (await lease())?.spec.holderIdentity;
        return managers.find((m) => m !== leader && m.isLeader && m.identity === holder);
      });
      console.log(
        `leader stopped (lease released) -> ${next.identity} leading in ${Date.now() - stoppedAt} ms`,
      );
      expect((await lease())?.spec.leaseTransitions).toBe(transitions + 1);
      expect(managers.filter((m) => m.isLeader)).toEqual([next]);
      await applyApp(admin, NS, 'second', appSpec({ regions: [region('us')] }));
      await eventually(
        'the second App reconciled by the new leader',
        async () => (await deploymentsOf('second')).length === 3,
      );
    });

    it('a leader that dies without releasing is replaced once its Lease expires', async () => {
      const leader = managers.find((m) => m.isLeader) as Manager;
      const last = managers.find((m) => !stopped.has(m) && m !== leader) as Manager;
      stopped.add(leader);
      const crashedAt = Date.now();
      await leader.stop({ releaseLease: false });
      expect((await lease())?.spec.holderIdentity).toBe(leader.identity);
      await eventually(
        'the last replica to lead',
        async () => last.isLeader && (await lease())?.spec.holderIdentity === last.identity,
        15_000,
      );
      const took = Date.now() - crashedAt;
      console.log(
        `leader crashed (lease kept) -> ${last.identity} leading in ${took} ms (lease duration 3000 ms)`,
      );
      expect(took).toBeGreaterThanOrEqual(2000);
      await applyApp(admin, NS, 'third', appSpec({ regions: [region('eu')] }));
      await eventually('the third App reconciled', async () => (await deploymentsOf('third')).length === 3);
    });
  },
);

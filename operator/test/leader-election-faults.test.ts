import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../src/manager.ts';
import { isConflict, KubeClient } from '../src/runtime/kube-client.ts';
import { LeaderElector } from '../src/runtime/leader-election.ts';
import { DEPLOYMENTS, LEASES, resourcePath } from '../src/runtime/resources.ts';
import { applyApp, createNamespace, eventually, installCrd, startOperator, testConfig } from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable, startControlPlane } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';
import { type StallProxy, startStallProxy } from './stall-proxy.ts';

/*
 * Leader election under the faults client-go's own tests cover, on a real kube-apiserver + etcd: a hung
 * connection (the renew deadline), a lease taken by someone else, clock skew between replicas, many
 * candidates at once (conflicts), and an apiserver restart. Timings are a tenth of the defaults
 * (T); the assertions are in those units, with slack for a loaded machine.
 */
const NS = 'kube-system';
const T = { leaseDurationMs: 2000, renewDeadlineMs: 1400, retryPeriodMs: 200 };
const logger = pino({ level: process.env.OPERATOR_TEST_LOG ?? 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Lease = {
  metadata: { resourceVersion: string };
  spec: {
    holderIdentity?: string;
    renewTime?: string;
    leaseDurationSeconds?: number;
    leaseTransitions?: number;
  };
};
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

describe.runIf(controlPlaneAvailable({ controllers: false, suite: 'leader election faults' }))(
  'leader election on a real apiserver: renew deadline, lost lease, clock skew, conflicts, restarts',
  () => {
    let cp: ControlPlane;
    let admin: KubeClient;
    let proxy: StallProxy;
    const stops: AbortController[] = [];
    const elector = (identity: string, lease: string, client = admin) =>
      new LeaderElector(client, { namespace: NS, name: lease, identity, logger, ...T });
    const signal = () => {
      const c = new AbortController();
      stops.push(c);
      return c.signal;
    };
    const leaseOf = (name: string) => admin.getOrNull<Lease>(resourcePath(LEASES, NS, name));
    /** Writes the Lease as another client would; a 409 (the elector renewed meanwhile) reads and tries again. */
    const writeLease = async (name: string, spec: Lease['spec']): Promise<void> => {
      try {
        await writeLeaseOnce(name, spec);
      } catch (err) {
        if (!isConflict(err)) throw err;
        await writeLease(name, spec);
      }
    };
    const writeLeaseOnce = async (name: string, spec: Lease['spec']) => {
      const lease = await leaseOf(name);
      const body = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name,
          namespace: NS,
          ...(lease ? { resourceVersion: lease.metadata.resourceVersion } : {}),
        },
        spec,
      };
      if (lease) await admin.replace(resourcePath(LEASES, NS, name), body);
      else await admin.create(resourcePath(LEASES, NS), body);
    };

    beforeAll(async () => {
      cp = await startControlPlane({ controllers: false, beforeControllers: installCrd });
      admin = new KubeClient(cp.kubeConfig('admin'));
      proxy = await startStallProxy('127.0.0.1', Number(new URL(cp.server).port));
    }, 300_000);
    afterAll(async () => {
      for (const s of stops) s.abort();
      await proxy?.close();
      await cp?.stop();
    }, 60_000);

    it('the timings are checked: the renew deadline must be shorter than the lease, and longer than a retry', () => {
      const make = (leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number) => () =>
        new LeaderElector(admin, {
          namespace: NS,
          name: 'bad',
          identity: 'x',
          logger,
          leaseDurationMs,
          renewDeadlineMs,
          retryPeriodMs,
        });
      expect(make(15_000, 15_000, 2000)).toThrow(/must exceed the renew deadline/);
      expect(make(15_000, 2000, 2000)).toThrow(/retry period/);
      expect(make(15_000, 10_000, 2000)).not.toThrow();
    });

    it('renew deadline: a leader whose connection hangs steps down within the deadline, before anyone else leads', async () => {
      const a = elector('hung', 'deadline', new KubeClient(cp.kubeConfig('admin', proxy.url)));
      const b = elector('healthy', 'deadline');
      expect(await a.acquire(signal())).toBe(true);
      const lost = a.holdUntilLost(signal()).then((why) => ({ why, at: Date.now() }));
      const took = b.acquire(signal()).then(() => Date.now());
      await sleep(3 * T.retryPeriodMs);
      const stalledAt = Date.now();
      proxy.stall();
      try {
        const gaveUp = await Promise.race([lost, sleep(8000).then(() => null)]);
        expect(gaveUp, 'the leader never stepped down while its Lease calls hung').not.toBeNull();
        const bAt = await took;
        console.log(
          `hung leader stepped down ${(gaveUp?.at ?? 0) - stalledAt} ms after the stall; the other took over after ${bAt - stalledAt} ms`,
        );
        expect(gaveUp?.why).toBe('deadline');
        expect(a.isLeader).toBe(false);
        // The deadline runs from the start of the last renewal, which was before the stall.
        expect((gaveUp?.at ?? 0) - stalledAt).toBeLessThanOrEqual(T.renewDeadlineMs + 300);
        expect(gaveUp?.at ?? Number.POSITIVE_INFINITY).toBeLessThan(bAt);
        expect((await leaseOf('deadline'))?.spec.holderIdentity).toBe('healthy');
      } finally {
        proxy.resume();
      }
    });

    it('lost lease: when the Lease names another holder, the leader steps down at its next renewal', async () => {
      const a = elector('owner', 'taken');
      expect(await a.acquire(signal())).toBe(true);
      const lost = a.holdUntilLost(signal()).then((why) => ({ why, at: Date.now() }));
      await sleep(2 * T.retryPeriodMs);
      const takenAt = Date.now();
      await writeLease('taken', {
        holderIdentity: 'intruder',
        leaseDurationSeconds: 60,
        renewTime: microTime(Date.now()),
      });
      const result = await Promise.race([lost, sleep(5000).then(() => null)]);
      expect(result?.why).toBe('taken');
      expect((result?.at ?? Number.POSITIVE_INFINITY) - takenAt).toBeLessThan(T.renewDeadlineMs);
      expect(a.isLeader).toBe(false);
      expect((await leaseOf('taken'))?.spec.holderIdentity).toBe('intruder');
    });

    it("clock skew: a holder's renewTime in the future does not keep its lease past a lease duration of silence", async () => {
      await writeLease('skew-ahead', {
        holderIdentity: 'ghost-with-a-fast-clock',
        leaseDurationSeconds: 2,
        renewTime: microTime(Date.now() + 3_600_000),
      });
      const c = elector('candidate', 'skew-ahead');
      const started = Date.now();
      expect(await c.acquire(signal())).toBe(true);
      const took = Date.now() - started;
      console.log(`lease of a silent holder (renewTime an hour ahead) taken after ${took} ms`);
      expect(took).toBeGreaterThanOrEqual(T.leaseDurationMs - 100);
      expect(took).toBeLessThan(T.leaseDurationMs + 2000);
    });

    it('clock skew: a holder that renews with a clock an hour behind keeps its lease', async () => {
      const renew = () =>
        writeLease('skew-behind', {
          holderIdentity: 'live-with-a-slow-clock',
          leaseDurationSeconds: 2,
          renewTime: microTime(Date.now() - 3_600_000),
        });
      await renew();
      const renewing = setInterval(() => void renew().catch(() => {}), 300);
      const d = elector('patient', 'skew-behind');
      const stop = new AbortController();
      stops.push(stop);
      const acquired = d.acquire(stop.signal);
      try {
        const early = await Promise.race([acquired, sleep(2 * T.leaseDurationMs).then(() => 'waiting')]);
        expect(early).toBe('waiting');
      } finally {
        clearInterval(renewing);
      }
      const silentAt = Date.now();
      expect(await acquired).toBe(true);
      expect(Date.now() - silentAt).toBeLessThan(T.leaseDurationMs + 2000);
    });

    it('conflicts: of five candidates racing for a free lease, exactly one leads', async () => {
      const candidates = Array.from({ length: 5 }, (_, i) => elector(`racer-${i}`, 'race'));
      const results = candidates.map((c) => c.acquire(signal()));
      await Promise.race(results);
      await sleep(4 * T.retryPeriodMs);
      const leaders = candidates.filter((c) => c.isLeader);
      expect(leaders).toHaveLength(1);
      const lease = await leaseOf('race');
      expect(candidates.findIndex((c) => c.isLeader)).toBe(
        Number(lease?.spec.holderIdentity?.replace('racer-', '')),
      );
    });

    it('a lost term cancels the calls in flight at once and refuses new ones', async () => {
      const term = new AbortController();
      const client = new KubeClient(cp.kubeConfig('admin', proxy.url)).bound(term.signal);
      await client.get(resourcePath(LEASES, NS)); // a connection exists
      proxy.stall();
      try {
        const hung = client.get(resourcePath(LEASES, NS)).then(
          () => 'answered',
          () => Date.now(),
        );
        await sleep(300);
        const abortedAt = Date.now();
        term.abort(new Error('leadership lost (deadline)'));
        const ended = await Promise.race([hung, sleep(3000).then(() => 'still waiting')]);
        expect(typeof ended).toBe('number');
        expect((ended as number) - abortedAt).toBeLessThan(200);
        await expect(client.get(resourcePath(LEASES, NS))).rejects.toThrow(/leadership lost/);
      } finally {
        proxy.resume();
      }
    });

    it('a Manager that loses its connection stops acting before another Manager leads', async () => {
      const config = (identity: string) => {
        const c = testConfig('http://127.0.0.1:9', 'x'.repeat(32), { logLevel: 'silent' });
        c.leaderElection = { enabled: true, namespace: NS, name: 'managers', identity };
        return c;
      };
      const timings = { ...T, standbyReassertMs: 2000, probeStatusRefreshMs: 60_000 };
      const extra = { probe: async () => true, standbyTargets: async () => [], timings };
      const a = await startOperator(cp.kubeConfig('admin', proxy.url), config('m-hung'), extra);
      await eventually('the proxied manager to lead', async () => a.isLeader);
      const b = await startOperator(cp.kubeConfig('admin'), config('m-healthy'), extra);
      let overlapMs = 0;
      let aStoppedAt = 0;
      let bLedAt = 0;
      const watch = setInterval(() => {
        const now = Date.now();
        if (a.isLeader && b.isLeader) overlapMs += 5;
        if (!a.isLeader && !aStoppedAt) aStoppedAt = now;
        if (b.isLeader && !bLedAt) bLedAt = now;
      }, 5);
      const stalledAt = Date.now();
      proxy.stall();
      try {
        await eventually('the healthy manager to lead', async () => b.isLeader, 15_000);
        // The sampler may not have run since (a busy machine): b leads now, so now bounds its start.
        bLedAt ||= Date.now();
        console.log(
          `manager: hung leader stopped after ${aStoppedAt - stalledAt} ms, the other led after ${bLedAt - stalledAt} ms`,
        );
        expect(overlapMs).toBe(0);
        expect(aStoppedAt).toBeGreaterThan(0);
        expect(aStoppedAt).toBeLessThan(bLedAt);
        expect(await (await fetch(`${a.metricsUrl}/metrics`)).text()).toMatch(
          /^gatehouse_operator_leadership_lost_total\{why="deadline"\} 1$/m,
        );
      } finally {
        clearInterval(watch);
        await a.stop({ releaseLease: false });
        proxy.resume();
        await b.stop();
      }
    }, 60_000);

    it('an apiserver restart: never two leaders, one leads afterwards, and its informers carry on', async () => {
      await createNamespace(admin, 'restart');
      const config = (identity: string) => {
        const c = testConfig('http://127.0.0.1:9', 'x'.repeat(32), { logLevel: 'silent' });
        c.leaderElection = { enabled: true, namespace: NS, name: 'restart', identity };
        return c;
      };
      const timings = { ...T, standbyReassertMs: 2000, probeStatusRefreshMs: 60_000 };
      const extra = { probe: async () => true, standbyTargets: async () => [], timings };
      const managers: Manager[] = [
        await startOperator(cp.kubeConfig('admin'), config('r-1'), extra),
        await startOperator(cp.kubeConfig('admin'), config('r-2'), extra),
      ];
      let overlaps = 0;
      const watch = setInterval(() => {
        if (managers.every((m) => m.isLeader)) overlaps += 1;
      }, 5);
      try {
        await eventually('a leader', async () => managers.some((m) => m.isLeader));
        const restartedAt = Date.now();
        await cp.restartApiserver(1000);
        console.log(`apiserver restarted in ${Date.now() - restartedAt} ms`);
        const leader = await eventually(
          'a leader after the restart',
          async () => managers.find((m) => m.isLeader),
          20_000,
        );
        expect((await leaseOf('restart'))?.spec.holderIdentity).toBe(leader.identity);
        await applyApp(admin, 'restart', 'after', appSpec({ regions: [region('eu')] }));
        await eventually(
          'the App created after the restart reconciled',
          async () =>
            (await admin.list<{ metadata: { name: string } }>(resourcePath(DEPLOYMENTS, 'restart'))).items
              .length === 3,
          20_000,
        );
        expect(overlaps).toBe(0);
      } finally {
        clearInterval(watch);
        await Promise.all(managers.map((m) => m.stop()));
      }
    }, 120_000);
  },
);

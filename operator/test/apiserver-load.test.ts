import { startTestApi, type TestApi } from '@gatehouse/api/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { OperatorConfig } from '../src/config.ts';
import { REQUEST_BUDGET } from '../src/controllers/budget.ts';
import type { Manager } from '../src/manager.ts';
import type { KubeClient } from '../src/runtime/kube-client.ts';
import {
  applyApp,
  condition,
  createNamespace,
  eventually,
  getApp,
  startClusterWithOperator,
  startOperator,
  testConfig,
} from './cluster.ts';
import { type ControlPlane, controlPlaneAvailable } from './control-plane.ts';
import { appSpec, region } from './fixtures.ts';

const NS = 'load';
const REGIONS = ['eu', 'us', 'ap'];
/** The kinds an App's objects are applied as: a write to one of them is an apply. */
const CHILD_RESOURCES = ['deployments', 'services', 'poddisruptionbudgets', 'ingresses', 'networkpolicies'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Counts = Map<string, number>;

/** The operator's requests so far, by `<VERB> <resource>`. */
async function requests(manager: Manager): Promise<Counts> {
  const { values } = await manager.metrics.kubeRequests.get();
  return new Map(values.map((v) => [`${v.labels.verb} ${v.labels.resource}`, v.value]));
}
const since = (after: Counts, before: Counts): Counts =>
  new Map(
    [...after].map(([k, n]): [string, number] => [k, n - (before.get(k) ?? 0)]).filter(([, n]) => n > 0),
  );
/** Requests matching `match`; the leader Lease's are not the reconciles' and never count. */
const total = (c: Counts, match: (verb: string, resource: string) => boolean = () => true) =>
  [...c].reduce((sum, [k, n]) => {
    const [verb = '', resource = ''] = k.split(' ');
    return resource !== 'leases' && match(verb, resource) ? sum + n : sum;
  }, 0);
const applies = (c: Counts) =>
  total(c, (verb, resource) => verb === 'PATCH' && CHILD_RESOURCES.includes(resource));
const writes = (c: Counts) => total(c, (verb) => verb !== 'GET' && verb !== 'WATCH');
const reads = (c: Counts) => total(c, (verb) => verb === 'GET');
async function reconciles(manager: Manager): Promise<number> {
  const { values } = await manager.metrics.reconciles.get();
  return values.reduce((n, v) => n + v.value, 0);
}
/** Waits until `manager` has reconciled nothing for `ms` (its first pass and what it triggered are over). */
async function settled(manager: Manager, ms: number, limitMs = 120_000) {
  const until = Date.now() + limitMs;
  let last = await reconciles(manager);
  let still = Date.now();
  while (Date.now() - still < ms) {
    if (Date.now() > until) throw new Error(`still reconciling after ${limitMs} ms`);
    await sleep(250);
    const now = await reconciles(manager);
    if (now !== last) {
      last = now;
      still = Date.now();
    }
  }
}

describe.runIf(controlPlaneAvailable())(
  'load on the apiserver: a request budget per reconcile, no apply of unchanged objects, a quiet new leader',
  () => {
    let cp: ControlPlane;
    let admin: KubeClient;
    let api: TestApi;
    const running: Manager[] = [];
    const config = (over: Partial<OperatorConfig> = {}) =>
      testConfig(api.url, api.runtime.adminToken, { resyncMs: 600_000, ...over });
    const start = async (c: OperatorConfig) => {
      const manager = await startOperator(cp.kubeConfig('operator'), c, {
        probe: async () => true,
        standbyTargets: async () => [],
      });
      running.push(manager);
      await eventually('the manager to lead', async () => manager.isLeader, 30_000);
      return manager;
    };
    const stop = async (manager: Manager) => {
      running.splice(running.indexOf(manager), 1);
      await manager.stop();
    };
    const reconciled = async (name: string) => {
      const app = await getApp(admin, NS, name);
      return condition(app, 'Registered')?.status === 'True' && app?.status?.observedGeneration === 1;
    };
    const spec = () => appSpec({ regions: REGIONS.map((r) => region(r)) });

    beforeAll(async () => {
      ({ cp, admin } = await startClusterWithOperator());
      await createNamespace(admin, NS);
      api = await startTestApi();
    }, 300_000);
    // Each test leads with managers of its own; a failed one must not keep the Lease from the next.
    afterEach(async () => {
      for (const m of running.splice(0)) await m.stop();
    });
    afterAll(async () => {
      await api?.close();
      await cp?.stop();
    }, 60_000);

    it('the first pass of an App of 3 regions applies each of its objects once and stays within the budget', async () => {
      const manager = await start(config());
      const before = await requests(manager);
      const reconcilesBefore = await reconciles(manager);
      await applyApp(admin, NS, 'first', spec());
      await eventually('the App reconciled', () => reconciled('first'), 60_000);
      // The Deployment controller's status updates each enqueue the App again: let them pass.
      await settled(manager, 3000);
      const used = since(await requests(manager), before);
      const passes = (await reconciles(manager)) - reconcilesBefore;
      console.log('first pass of one App', { passes, requests: Object.fromEntries(used) });
      const objects = REGIONS.length * REQUEST_BUDGET.objectsPerRegion;
      // Once each; an object whose watch event is still on its way when the next reconcile starts may
      // be applied once more (harmless, and rare), never once per reconcile.
      expect(applies(used)).toBeGreaterThanOrEqual(objects);
      expect(applies(used)).toBeLessThanOrEqual(objects + 3);
      expect(total(used)).toBeLessThanOrEqual(REQUEST_BUDGET.firstPass(REGIONS.length, passes));
    }, 120_000);

    it('an App left alone is reconciled by the resync only, with reads within the budget and no write', async () => {
      const manager = await start(config({ resyncMs: 1000 }));
      await applyApp(admin, NS, 'alone', spec());
      await eventually('the App reconciled', () => reconciled('alone'), 60_000);
      // The Deployment controller's first status updates move the App's status: wait until it rests.
      let version = '';
      let restingSince = Date.now();
      await eventually(
        'the App unchanged for 3 s',
        async () => {
          const now = (await getApp(admin, NS, 'alone'))?.metadata.resourceVersion ?? '';
          if (now !== version) [version, restingSince] = [now, Date.now()];
          return Date.now() - restingSince >= 3000;
        },
        60_000,
      );
      const before = await requests(manager);
      const reconcilesBefore = await reconciles(manager);
      await sleep(10_000);
      const used = since(await requests(manager), before);
      const passes = (await reconciles(manager)) - reconcilesBefore;
      console.log('10 s left alone, resync every second, 2 Apps', {
        passes,
        requests: Object.fromEntries(used),
      });
      // Two Apps (this one and the first test's), a resync a second: about 20 reconciles, each only reads.
      expect(passes).toBeGreaterThanOrEqual(10);
      expect(passes).toBeLessThanOrEqual(2 * 12);
      expect(writes(used)).toBe(0);
      expect(reads(used)).toBeLessThanOrEqual(passes * REQUEST_BUDGET.unchanged(0));
    }, 120_000);

    it('a new leader over many settled Apps applies nothing and stays within the budget per App', async () => {
      const N = 12;
      const first = await start(config());
      for (let i = 0; i < N; i++) await applyApp(admin, NS, `fleet${i}`, spec());
      await eventually(
        `${N} Apps reconciled`,
        async () =>
          (await Promise.all(Array.from({ length: N }, (_, i) => reconciled(`fleet${i}`)))).every(Boolean),
        120_000,
      );
      await settled(first, 3000);
      await stop(first);
      const apps = N + 2;
      const startedAt = Date.now();
      const next = await start(config());
      await eventually(
        'every App reconciled once by the new leader',
        async () => (await reconciles(next)) >= apps,
        60_000,
      );
      await settled(next, 2000);
      const seconds = (Date.now() - startedAt) / 1000;
      const used = await requests(next);
      const passes = await reconciles(next);
      console.log(`a new leader over ${apps} Apps`, { seconds, passes, requests: Object.fromEntries(used) });
      expect(applies(used)).toBe(0);
      // Its informers' lists and watches (one of each per informer), then each App within the budget of
      // an unchanged one, with one status write at most (the probe times it saw itself).
      const setup = 2 * total(used, (verb) => verb === 'WATCH');
      expect(total(used)).toBeLessThanOrEqual(setup + passes * (REQUEST_BUDGET.unchanged(0) + 1));
    }, 300_000);
  },
);

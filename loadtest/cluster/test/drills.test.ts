import { Gatehouse } from '@gatehouse/node';
import { solveChallenge } from '@gatehouse/node/headless';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cutDatabase, restoreDatabase, startKubelet, stopKubelet } from './faults.ts';
import {
  appCredentials,
  applyApp,
  installChart,
  LOAD_RISK_POLICY,
  NS,
  ownedBy,
  uninstallChart,
} from './gatehouse.ts';
import { CLUSTER_DIR, clusterEnv, forward, isReady, Kube, type KubeObject, run, waitFor } from './harness.ts';
import { DrillLoad, type K6Result, k6Missing, type RegionTarget } from './k6.ts';

/**
 * SRE drills on real pods, with k6 as the end users' load (k6/drill.js through the Services' host ports):
 *   - an API pod deleted exits on SIGTERM within its grace period;
 *   - every API pod of a region SIGKILLed, and separately made unready by cutting its database: the
 *     region's standby serves, `offline_` tokens are accepted once during and after the outage, traffic
 *     returns once the pods are Ready again;
 *   - a new API image rolled out through the App under load;
 *   - a node lost (its kubelet killed): what the region does, measured, until the kubelet is back.
 * Correctness is asserted (k6's thresholds on failed verifications, double spends and checks; pods and
 * nodes back); the times are printed as one `drill figures` block, never asserted: the machine's load
 * decides them.
 */

const skip = inject('clusterSkip') || k6Missing();
if (skip && !inject('clusterSkip')) console.warn(`\n!!! SKIPPING the drills: ${skip}\n`);
const APP = 'drill';
/** The chart's operator.probe.flapWindowSeconds (charts/gatehouse/values.yaml), and a margin. */
const FLAP_WINDOW_MS = 62_000;
let lastRecoveryAt = 0;
const DATABASE = 'gatehouse_cluster_drills';
/** The API image the rolling upgrade moves to: the same content under another version, on every node. */
const IMAGE = 'localhost/gatehouse/api';
const UPGRADE_TAG = '0.0.1-drill';
const figures: Record<string, Record<string, number | string | boolean>> = {};

const appPods = (kube: Kube, region: string, component: string) =>
  kube
    .list(`/api/v1/namespaces/${NS}/pods?${ownedBy(APP)}`)
    .then((pods) =>
      pods.filter(
        (p) =>
          p.metadata.labels?.['gatehouse.dev/region'] === region &&
          p.metadata.labels?.['app.kubernetes.io/component'] === component,
      ),
    );
const apiPods = (kube: Kube, region: string) => appPods(kube, region, 'api');

/** A standby's public /status: `serving` says whether it answers the challenge flow. */
const serving = (url: string) =>
  fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.json() as Promise<{ serving: boolean; mode: string }>)
    .then((s) => s.serving);

/** Ready addresses of a Service, from its EndpointSlices. */
async function readyEndpoints(kube: Kube, service: string): Promise<number> {
  const slices = await kube.list(
    `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${service}`)}`,
  );
  return slices
    .flatMap((s) => (s.endpoints as { conditions?: { ready?: boolean } }[] | undefined) ?? [])
    .filter((e) => e.conditions?.ready !== false).length;
}

const containerd = (region: string) => `${CLUSTER_DIR}/nodes/${region}/containerd/containerd.sock`;
const ctr = (region: string, ...args: string[]) =>
  run('ctr', ['--address', containerd(region), '-n', 'k8s.io', ...args]);

const since = (t: number) => Date.now() - t;

/** One drill's figures in the block printed at the end. */
function figuresOf(drill: string): Record<string, number | string | boolean> {
  figures[drill] = figures[drill] ?? {};
  return figures[drill];
}

/** k6's verdict, printed; the assertions name what failed. */
function expectK6(drill: string, result: K6Result) {
  const record = figuresOf(drill);
  Object.assign(record, {
    k6Verified: result.count('verifications'),
    k6Validations: result.count('validations'),
    k6Offline: result.count('offline_tokens_accepted'),
    k6Failed: result.count('failed_verifications'),
    k6ClientOnly: result.count('client_only_tokens'),
    k6Double: result.count('tokens_accepted_twice'),
    k6MainHostFailures: result.count('main_host_failures'),
  });
  console.log(`${drill}: k6 exited ${result.code}; thresholds:\n  ${result.thresholds().join('\n  ')}`);
  const errors = result.output
    .split('\n')
    .filter((l) => l.includes('end user failed'))
    .slice(0, 20);
  expect(
    result.thresholds().length,
    `${drill}: no k6 summary\n${result.output.slice(-3000)}`,
  ).toBeGreaterThan(0);
  expect(result.failedThresholds(), `${drill}: k6 thresholds\n${errors.join('\n')}`).toEqual([]);
  expect(result.code, result.output.slice(-3000)).toBe(0);
  expect(result.count('tokens_accepted_twice')).toBe(0);
}

describe.skipIf(skip)('drills on real pods', () => {
  const kube = skip ? (undefined as unknown as Kube) : new Kube();
  const regions = skip ? [] : (clusterEnv().CLUSTER_REGIONS ?? '').split(' ');
  const [a, b] = regions as [string, string];
  const urls = { apiA: '', bypassA: '', fallbackA: '', apiB: '', bypassB: '', fallbackB: '' };
  let creds = { appKey: '', appSecret: '' };
  /** Region a's end users; the integrator validates through the main host, which a global load balancer
   * sends to a healthy region: region b's API Service stands for it (one database). */
  const targetA = (): RegionTarget => ({
    name: a,
    api: urls.apiA,
    bypass: urls.bypassA,
    fallback: urls.fallbackA,
    validate: urls.apiB,
  });
  const targetB = (): RegionTarget => ({
    name: b,
    api: urls.apiB,
    bypass: urls.bypassB,
    fallback: urls.fallbackB,
    validate: urls.apiB,
  });
  /** The integrator as the Node SDK makes it: `offline_` tokens to region a's fallback host first. */
  const integrator = () =>
    new Gatehouse({
      ...creds,
      baseUrl: urls.apiB,
      maxRetries: 1,
      timeoutMs: 3000,
      backupServers: [urls.fallbackA],
    });
  /** An end user solving on region a's bypass host while the region is on its standby. */
  const solveOffline = () =>
    solveChallenge({
      baseUrl: urls.bypassA,
      appKey: creds.appKey,
      action: 'login',
      bypassServers: [],
      clientOnlyFallback: false,
    }).then((s) => s.passToken);

  beforeAll(async () => {
    await installChart(DATABASE);
    const started = Date.now();
    await applyApp(kube, APP, regions, 2, LOAD_RISK_POLICY);
    figures.app = { appliedToEveryPodReadyMs: since(started), goalMs: 60_000 };
    creds = await appCredentials(kube, APP);
    urls.apiA = await forward('drill-api', 22631, `${NS}/${APP}-${a}-api:80`, a);
    urls.bypassA = await forward('drill-bypass', 22632, `${NS}/${APP}-${a}-bypass:80`, a);
    urls.fallbackA = await forward('drill-fallback', 22633, `${NS}/${APP}-${a}-fallback:80`, a);
    urls.apiB = await forward('drill-api-b', 22634, `${NS}/${APP}-${b}-api:80`, b);
    urls.bypassB = await forward('drill-bypass-b', 22635, `${NS}/${APP}-${b}-bypass:80`, b);
    urls.fallbackB = await forward('drill-fallback-b', 22636, `${NS}/${APP}-${b}-fallback:80`, b);
  });

  afterAll(async () => {
    if (skip) return;
    // Every fault undone, also after a failed drill.
    if (await restoreDatabase(a).catch(() => false))
      console.warn(`database cut of ${a} removed after a failure`);
    if (startKubelet(a)) {
      console.warn(`kubelet of ${a} started again after a failure`);
      await waitFor(`node-${a} Ready`, 120_000, async () =>
        isReady(await kube.get(`/api/v1/nodes/node-${a}`)),
      );
    }
    console.log(`drill figures (ms unless named):\n${JSON.stringify(figures, null, 2)}`);
    // What an SRE sees: the operator's events on the App, oldest first.
    const events = await kube
      .list(
        `/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${APP}`)}`,
      )
      .catch(() => []);
    console.log(
      `operator events on App ${APP}:\n${events
        .map(
          (e) =>
            `  ${e.eventTime ?? e.firstTimestamp} ${e.type} ${e.reason} (${e.count ?? 1}×): ${e.message}`,
        )
        .sort()
        .join('\n')}`,
    );
    // The App first, while the operator that holds its finalizer is still there.
    await kube.delete(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`);
    await waitFor('the App gone', 120_000, async () =>
      kube
        .call('GET', `/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`)
        .then((r) => r.status === 404),
    ).catch((e) => console.warn(e));
    await uninstallChart(DATABASE);
    // The upgrade's image name leaves the nodes' containerd (kept across runs in .cache/cluster).
    for (const r of regions) await ctr(r, 'images', 'rm', `${IMAGE}:${UPGRADE_TAG}`).catch(() => {});
  });

  it('deletes an API pod within its grace period: the API drains on SIGTERM and exits', async () => {
    const [pod] = (await apiPods(kube, a)) as [KubeObject];
    const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
    const started = Date.now();
    await kube.delete(`/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`);
    await waitFor('the pod gone', (grace + 30) * 1000, () =>
      kube.call('GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`).then((r) => r.status === 404),
    );
    figures.podDeletion = { deletedToGoneMs: since(started), goalMs: 5000, graceSeconds: grace };
    // Past the grace period the kubelet would have SIGKILLed a process that ignored SIGTERM.
    expect(since(started)).toBeLessThan(grace * 1000);
    await waitFor('the region back to 2 Ready API pods', 120_000, async () => {
      const pods = await apiPods(kube, a);
      return pods.length === 2 && pods.every(isReady);
    });
  });

  /**
   * The shape of both standby drills: k6's end users on region a, `breakIt`, the standby serving, two
   * `offline_` tokens minted on the bypass host (one validated during the outage, one after the switch
   * back: each accepted once, its replay refused), `repair`, the pods Ready, the standby stepping back.
   */
  async function standbyDrill(
    drill: string,
    breakIt: () => Promise<void>,
    unready: () => Promise<boolean>,
    repair: () => Promise<void>,
  ) {
    const f = figuresOf(drill);
    // Each drill is an incident of its own: a region that fails again within the operator's flap window
    // of its last recovery is taken for flapping and kept on the standby for the flap hold, which is the
    // damping working, not the switch back this drill measures.
    const quiet = lastRecoveryAt + FLAP_WINDOW_MS - Date.now();
    if (quiet > 0) await new Promise((r) => setTimeout(r, quiet));
    const load = await DrillLoad.start({ name: drill, regions: [targetA()], ...creds, vus: 3 });
    try {
      await waitFor('k6: first verifications', 60_000, async () => load.verified >= 3);
      load.phase = 'outage';
      await breakIt();
      const brokenAt = Date.now();
      const sawUnready = waitFor('every API pod unready (or restarted)', 120_000, async () =>
        (await unready()) ? Date.now() : undefined,
      );
      await waitFor('the bypass standby serving', 60_000, () => serving(urls.bypassA));
      const switchedAt = Date.now();
      f.switchToStandbyMs = switchedAt - brokenAt;
      const unreadyAt = await sawUnready;
      f.podsUnreadyMs = unreadyAt - brokenAt;
      f.switchAfterUnreadyMs = switchedAt - unreadyAt;
      const app = await kube.get(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`);
      f.operatorSaid = app.status?.regions?.find((r: { name: string }) => r.name === a)?.serving ?? '?';

      const [during, after] = [await solveOffline(), await solveOffline()];
      expect(during).toMatch(/^offline_/);
      expect(after).toMatch(/^offline_/);
      const gh = integrator();
      expect(await gh.validate(during, { expectedAction: 'login' })).toMatchObject({
        accepted: true,
        offline: true,
      });
      expect((await gh.validate(during, { expectedAction: 'login' })).accepted).toBe(false);

      load.phase = 'repaired';
      const repairedAt = Date.now();
      await repair();
      const readyAt = await waitFor('the API pods Ready again', 180_000, async () => {
        const now = await apiPods(kube, a);
        return now.length === 2 && now.every(isReady) ? Date.now() : undefined;
      });
      f.readyAfterRepairMs = readyAt - repairedAt;
      await waitFor('the bypass standby stepping back', 60_000, async () => !(await serving(urls.bypassA)));
      f.switchBackAfterReadyMs = since(readyAt);
      lastRecoveryAt = Date.now();
      load.phase = 'after';

      // After the switch back: the offline_ token minted during the outage is accepted once, then refused.
      expect(await gh.validate(after, { expectedAction: 'login' })).toMatchObject({
        accepted: true,
        offline: true,
      });
      expect((await gh.validate(after, { expectedAction: 'login' })).accepted).toBe(false);
      expect((await gh.validate(during, { expectedAction: 'login' })).accepted).toBe(false);
      const before = load.verified;
      await waitFor(
        'k6: verifications after the switch back',
        60_000,
        async () => load.verified >= before + 5,
      );
    } finally {
      const result = await load.stop();
      f.byPhase = JSON.stringify(load.byPhase);
      expectK6(drill, result);
    }
    // Region b was never touched.
    expect((await fetch(`${urls.apiB}/readyz`)).status).toBe(200);
  }

  it('SIGKILL of every API pod of a region: the standby serves, no verification fails, traffic returns', async () => {
    const restarts = (pods: KubeObject[]) =>
      pods.reduce((n, p) => n + (p.status.containerStatuses?.[0]?.restartCount ?? 0), 0);
    let restartsBefore = 0;
    /** SIGKILLs the API container of every API pod of region a, on its node's containerd. */
    const killAll = async () => {
      const pods = await apiPods(kube, a);
      const { stdout } = await ctr(a, 'containers', 'ls', '-q');
      const ids = pods.flatMap((p) =>
        (p.status.containerStatuses ?? []).map((c: { containerID: string }) =>
          c.containerID.replace(/^containerd:\/\//, ''),
        ),
      );
      expect(ids.length).toBe(2);
      for (const id of ids) {
        expect(stdout.split('\n')).toContain(id);
        await ctr(a, 'tasks', 'kill', '-s', 'SIGKILL', id);
      }
    };
    await standbyDrill(
      'sigkill',
      async () => {
        // The kubelet restarts a killed container at once: when it is back within the operator's
        // detection (3 probes, 1.5 s) no switch is due, and rightly none comes. Killed again once
        // restarted, each waits out the kubelet's restart back-off (10 s): an outage to switch for.
        restartsBefore = restarts(await apiPods(kube, a));
        await killAll();
        await waitFor('the killed API containers restarted', 60_000, async () => {
          const pods = await apiPods(kube, a);
          const restarted = pods.every((p) => p.status.containerStatuses?.[0]?.state?.running);
          return restarted && restarts(pods) >= restartsBefore + pods.length;
        });
        restartsBefore = restarts(await apiPods(kube, a));
        await killAll();
      },
      // The pods are unready through the back-off; a poll that missed it sees the second restart.
      async () => {
        const pods = await apiPods(kube, a);
        return pods.every((p) => !isReady(p)) || restarts(pods) >= restartsBefore + pods.length;
      },
      async () => {
        // The kubelet restarts the killed containers by itself.
      },
    );
  });

  it('cuts a region’s database: readiness fails, the standby serves, traffic returns once the pods are Ready', async () => {
    const restarts = async () =>
      (await apiPods(kube, a))
        .flatMap((p) =>
          (p.status.containerStatuses ?? []).map(
            (c: { restartCount: number }) => `${p.metadata.name}:${c.restartCount}`,
          ),
        )
        .sort();
    const before = await restarts();
    try {
      await standbyDrill(
        'databaseCut',
        () => cutDatabase(a),
        async () => (await apiPods(kube, a)).every((p) => !isReady(p)),
        async () => {
          expect(await restoreDatabase(a)).toBe(true);
        },
      );
    } finally {
      await restoreDatabase(a);
    }
    // The same containers throughout: liveness does not depend on the database, so none was restarted.
    expect(await restarts()).toEqual(before);
  });

  it('rolls a new API image out through the App under load: ≥ 1,000 validations, none failed', async () => {
    const f = figuresOf('rollingUpgrade');
    const image = `${IMAGE}:${UPGRADE_TAG}`;
    for (const r of regions) await ctr(r, 'images', 'tag', '--force', `${IMAGE}:0.0.0-dev`, image);
    const target = (t: RegionTarget): RegionTarget => ({ ...t, validate: t.api });
    const load = await DrillLoad.start({
      name: 'rollingUpgrade',
      regions: [target(targetA()), target(targetB())],
      ...creds,
      vus: 3,
      minValidations: 1000,
    });
    let standbyServed = false;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        if (
          (await serving(urls.bypassA).catch(() => false)) ||
          (await serving(urls.bypassB).catch(() => false))
        )
          standbyServed = true;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      await waitFor('k6: first verifications', 60_000, async () => load.verified >= 3);
      load.phase = 'rolling';
      const patchedAt = Date.now();
      const patched = await kube.call('PATCH', `/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`, {
        spec: { images: { api: image } },
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      await waitFor('the new image rolled out in every region', 240_000, async () => {
        for (const r of regions) {
          const pods = await apiPods(kube, r);
          const done =
            pods.length === 2 &&
            pods.every(
              (p) => isReady(p) && !p.metadata.deletionTimestamp && p.spec.containers[0].image === image,
            );
          if (!done) return false;
        }
        return true;
      });
      Object.assign(f, { patchToRolledOutMs: since(patchedAt), verifiedDuringRollout: load.verified });
      load.phase = 'after';
      await waitFor('k6: 1,000 validations', 300_000, async () => {
        const t = Object.values(load.tally).reduce((n, x) => n + x.ok + x.offline + x.failed, 0);
        return t >= 1010;
      });
    } finally {
      watching = false;
      await watch;
      const result = await load.stop();
      Object.assign(f, { standbyServedDuringRollout: standbyServed, byPhase: JSON.stringify(load.byPhase) });
      expectK6('rollingUpgrade', result);
      expect(result.count('validations')).toBeGreaterThanOrEqual(1000);
      expect(result.count('failed_verifications')).toBe(0);
    }
  });

  it('loses a node (its kubelet killed): measured, region b unaffected, everything back with the kubelet', async () => {
    const f = figuresOf('nodeLost');
    const node = `node-${a}`;
    // Region a's end users can only verify through region a's hosts, whose pods all live on that node:
    // only region b's end users are held to 0 failed.
    const load = await DrillLoad.start({
      name: 'nodeLost',
      regions: [targetA(), targetB()],
      ...creds,
      vus: 2,
      strictRegions: [b],
      noConnectionReuse: true,
    });
    try {
      await waitFor('k6: first verifications', 60_000, async () => load.verified >= 4);
      load.phase = 'kubelet-stopped';
      const stoppedAt = Date.now();
      await stopKubelet(a);
      await waitFor(
        `${node} NotReady`,
        180_000,
        async () => !isReady(await kube.get(`/api/v1/nodes/${node}`)),
      );
      f.nodeNotReadyMs = since(stoppedAt);
      load.phase = 'node-not-ready';
      await waitFor(
        'region a’s API endpoints gone',
        60_000,
        async () => (await readyEndpoints(kube, `${APP}-${a}-api`)) === 0,
      );
      f.apiEndpointsGoneMs = since(stoppedAt);
      f.bypassEndpointsAtThatTime = await readyEndpoints(kube, `${APP}-${a}-bypass`);
      load.phase = 'endpoints-gone';
      // A while without the node: what the operator and the end users make of it.
      await new Promise((r) => setTimeout(r, 8000));
      const app = await kube.get(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`);
      f.operatorSaid = app.status?.regions?.find((r: { name: string }) => r.name === a)?.serving ?? '?';
      f.bypassServingWithoutNode = await serving(urls.bypassA).catch(
        (e) => `unreachable (${e.cause?.code ?? e})`,
      );

      load.phase = 'kubelet-back';
      const backAt = Date.now();
      expect(startKubelet(a)).toBe(true);
      await waitFor(`${node} Ready`, 120_000, async () => isReady(await kube.get(`/api/v1/nodes/${node}`)));
      f.nodeReadyAfterKubeletMs = since(backAt);
      await waitFor('region a’s pods Ready with endpoints', 120_000, async () => {
        for (const c of ['api', 'bypass', 'fallback'])
          if (!(await appPods(kube, a, c)).every(isReady)) return false;
        return (await readyEndpoints(kube, `${APP}-${a}-api`)) === 2;
      });
      f.endpointsBackAfterKubeletMs = since(backAt);
      await waitFor('region a on its main API', 60_000, async () => !(await serving(urls.bypassA)));
      f.mainServingAfterKubeletMs = since(backAt);
      load.phase = 'after';
      const before = load.tally[a]?.ok ?? 0;
      await waitFor(
        'k6: region a verifying again',
        60_000,
        async () => (load.tally[a]?.ok ?? 0) >= before + 5,
      );
    } finally {
      if (startKubelet(a))
        await waitFor(`${node} Ready`, 120_000, async () => isReady(await kube.get(`/api/v1/nodes/${node}`)));
      const result = await load.stop();
      f.byPhase = JSON.stringify(load.byPhase);
      f.tally = JSON.stringify(load.tally);
      f.regionAFailed = result.count(`failed_verifications{region:${a}}`);
      f.regionAClientOnly = result.count(`client_only_tokens{region:${a}}`);
      f.regionBFailed = result.count(`failed_verifications{region:${b}}`);
      expectK6('nodeLost', result);
      expect(result.count(`failed_verifications{region:${b}}`)).toBe(0);
    }
    // No pod was replaced: the same pods came back (the eviction of an unreachable node's pods waits 300 s).
    for (const c of ['api', 'bypass', 'fallback'])
      expect((await appPods(kube, a, c)).every(isReady)).toBe(true);
  });
});

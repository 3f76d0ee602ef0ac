import { Gatehouse } from '@gatehouse/node';
import { solveChallenge } from '@gatehouse/node/headless';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { appCredentials, applyApp, installChart, NS, ownedBy, uninstallChart } from './gatehouse.ts';
import {
  CLUSTER_DIR,
  clusterEnv,
  forward,
  Kube,
  type KubeObject,
  podReady,
  run,
  waitFor,
} from './harness.ts';

/**
 * SRE drills on real pods, as figures (printed, never gates: the machine's load decides them) and as
 * correctness (asserted): an API pod deleted exits on SIGTERM within its grace period; every API pod of a
 * region SIGKILLed: the region's standby serves, every end-user verification still passes (`offline_`
 * tokens through the fallback host), none is accepted twice, and traffic returns once the pods are Ready.
 */

const skip = inject('clusterSkip');
const APP = 'drill';
const DATABASE = 'gatehouse_cluster_drills';
const figures: Record<string, number | string> = {};

const apiPods = (kube: Kube, region: string) =>
  kube
    .list(`/api/v1/namespaces/${NS}/pods?${ownedBy(APP)}`)
    .then((pods) =>
      pods.filter(
        (p) =>
          p.metadata.labels?.['gatehouse.dev/region'] === region &&
          p.metadata.labels?.['app.kubernetes.io/component'] === 'api',
      ),
    );

/** A standby's public /status: `serving` says whether it answers the challenge flow. */
const serving = (url: string) =>
  fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.json() as Promise<{ serving: boolean; mode: string }>)
    .then((s) => s.serving);

describe.skipIf(skip)('drills on real pods', () => {
  const kube = skip ? (undefined as unknown as Kube) : new Kube();
  const regions = skip ? [] : (clusterEnv().CLUSTER_REGIONS ?? '').split(' ');
  const [a, b] = regions as [string, string];
  const urls = { api: '', bypass: '', fallback: '', apiB: '' };
  let creds = { appKey: '', appSecret: '' };

  beforeAll(async () => {
    await installChart(DATABASE);
    const started = Date.now();
    await applyApp(kube, APP, regions);
    figures.appReadyMs = Date.now() - started;
    creds = await appCredentials(kube, APP);
    urls.api = await forward('drill-api', 22631, `${NS}/${APP}-${a}-api:80`, a);
    urls.bypass = await forward('drill-bypass', 22632, `${NS}/${APP}-${a}-bypass:80`, a);
    urls.fallback = await forward('drill-fallback', 22633, `${NS}/${APP}-${a}-fallback:80`, a);
    urls.apiB = await forward('drill-api-b', 22634, `${NS}/${APP}-${b}-api:80`, b);
  });

  afterAll(async () => {
    if (skip) return;
    console.log(`drill figures: ${JSON.stringify(figures)}`);
    // The App first, while the operator that holds its finalizer is still there.
    await kube.delete(`/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`);
    await waitFor('the App gone', 120_000, async () =>
      kube
        .call('GET', `/apis/gatehouse.dev/v1alpha1/namespaces/${NS}/apps/${APP}`)
        .then((r) => r.status === 404),
    ).catch((e) => console.warn(e));
    await uninstallChart(DATABASE);
  });

  it('deletes an API pod within its grace period: the API drains on SIGTERM and exits', async () => {
    const [pod] = (await apiPods(kube, a)) as [KubeObject];
    const grace = pod.spec.terminationGracePeriodSeconds ?? 30;
    const started = Date.now();
    await kube.delete(`/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`);
    await waitFor('the pod gone', (grace + 30) * 1000, () =>
      kube.call('GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}`).then((r) => r.status === 404),
    );
    figures.podDeletionMs = Date.now() - started;
    figures.podGraceSeconds = grace;
    // Past the grace period the kubelet would have SIGKILLed a process that ignored SIGTERM.
    expect(figures.podDeletionMs).toBeLessThan(grace * 1000);
    await waitFor('the region back to 2 Ready API pods', 120_000, async () => {
      const pods = await apiPods(kube, a);
      return pods.length === 2 && pods.every(podReady);
    });
  });

  it('SIGKILL of every API pod of a region: the standby serves, no verification fails, traffic returns', async () => {
    const { appKey, appSecret } = creds;
    // The integrator's server validates through the main host, which a global load balancer sends to a
    // healthy region (region b's Service stands for it: one database, so a token minted in a is claimed
    // there), and `offline_` tokens through region a's fallback host.
    const integrator = new Gatehouse({
      appKey,
      appSecret,
      baseUrl: urls.apiB,
      maxRetries: 1,
      timeoutMs: 3000,
      backupServers: [urls.fallback],
    });
    const outcome = { verified: 0, failed: 0, doubleAccepted: 0, offline: 0, failures: [] as string[] };
    let stop = false;
    // An end user on region a's hosts (its API, else its bypass host) and the integrator, one after the other.
    const loop = (async () => {
      while (!stop) {
        try {
          const solved = await solveChallenge({
            baseUrl: urls.api,
            appKey,
            action: 'login',
            bypassServers: [urls.bypass],
            timeoutMs: 3000,
            clientOnlyFallback: false,
          });
          const verdict = await integrator.validate(solved.passToken, { expectedAction: 'login' });
          if (verdict.accepted) outcome.verified++;
          else {
            outcome.failed++;
            outcome.failures.push(`${solved.route}: ${verdict.errorCode ?? verdict.reason}`);
          }
          if (solved.passToken.startsWith('offline_')) outcome.offline++;
          const replay = await integrator.validate(solved.passToken, { expectedAction: 'login' });
          if (replay.accepted) outcome.doubleAccepted++;
        } catch (e) {
          outcome.failed++;
          outcome.failures.push(String(e));
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await waitFor('a first verification', 30_000, async () => outcome.verified > 0);

    const killedAt = Date.now();
    const pods = await apiPods(kube, a);
    const sock = `${CLUSTER_DIR}/nodes/${a}/containerd/containerd.sock`;
    const { stdout } = await run('ctr', ['--address', sock, '-n', 'k8s.io', 'containers', 'ls', '-q']);
    const ids = pods.flatMap((p) =>
      (p.status.containerStatuses ?? []).map((c: { containerID: string }) =>
        c.containerID.replace(/^containerd:\/\//, ''),
      ),
    );
    expect(ids.length).toBe(2);
    for (const id of ids) {
      expect(stdout.split('\n')).toContain(id);
      await run('ctr', ['--address', sock, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id]);
    }
    await waitFor('the bypass standby serving', 60_000, () => serving(urls.bypass));
    figures.switchToStandbyMs = Date.now() - killedAt;
    // While the region is on its standby, a person solving on the bypass host gets an `offline_` token
    // that the integrator accepts once (the loop above may or may not have run through the outage).
    const offline = await solveChallenge({
      baseUrl: urls.bypass,
      appKey,
      action: 'login',
      bypassServers: [],
      clientOnlyFallback: false,
    });
    expect(offline.passToken).toMatch(/^offline_/);
    expect(await integrator.validate(offline.passToken, { expectedAction: 'login' })).toMatchObject({
      accepted: true,
      offline: true,
    });
    expect((await integrator.validate(offline.passToken, { expectedAction: 'login' })).accepted).toBe(false);
    const readyAt = await waitFor('the API pods Ready again', 180_000, async () => {
      const now = await apiPods(kube, a);
      return now.length === 2 && now.every(podReady) ? Date.now() : undefined;
    });
    figures.apiReadyAgainMs = readyAt - killedAt;
    await waitFor('the bypass standby stepping back', 60_000, async () => !(await serving(urls.bypass)));
    figures.switchBackAfterReadyMs = Date.now() - readyAt;
    // A few verifications on the main path again before the tally.
    const before = outcome.verified;
    await waitFor('verifications after the switch back', 30_000, async () => outcome.verified >= before + 3);
    stop = true;
    await loop;
    Object.assign(figures, {
      killVerified: outcome.verified,
      killOffline: outcome.offline,
      killFailed: outcome.failed,
      killDoubleAccepted: outcome.doubleAccepted,
    });
    expect(outcome.failures).toEqual([]);
    expect(outcome.doubleAccepted).toBe(0);
    // Region b was never touched.
    expect((await fetch(`${urls.apiB}/readyz`)).status).toBe(200);
  });
});

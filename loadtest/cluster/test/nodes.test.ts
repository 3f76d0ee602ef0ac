import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { inNode } from './faults.ts';
import { clusterEnv, forward, isReady, Kube, type KubeObject, script, waitFor } from './harness.ts';

/**
 * The local cluster itself: one node per region, each in its own network namespace and labelled with its
 * region; pods of a locally built image scheduled per region, reachable through a Service from the host,
 * and from each other by cluster DNS names across nodes.
 */

const skip = inject('clusterSkip');
const NS = 'cluster-nodes-test';
const PORT = 22611;

// A one-line HTTP server on the standby image's Node: it answers with its pod's name and node.
const server =
  "require('http').createServer((q,s)=>{if(q.url==='/peer'){fetch(process.env.PEER).then(r=>r.text()).then(t=>s.end(t),e=>{s.statusCode=502;s.end(String(e))});return}" +
  "s.end(process.env.POD+' '+process.env.NODE)}).listen(8080);process.on('SIGTERM',()=>process.exit(0))";

function deployment(region: string, peer: string) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `web-${region}` },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web', region } },
      template: {
        metadata: { labels: { app: 'web', region } },
        spec: {
          nodeSelector: { 'topology.kubernetes.io/region': region },
          containers: [
            {
              name: 'web',
              image: 'localhost/gatehouse/standby:0.0.0-dev',
              imagePullPolicy: 'Never',
              command: ['node', '-e', server],
              env: [
                { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                { name: 'PEER', value: peer },
              ],
              ports: [{ containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  };
}

/** What the way from a node to a Service and its pod holds, printed when the Service does not answer. */
async function pathFrom(region: string, serviceIp: string, podIp: string | undefined): Promise<string> {
  const out = (cmd: string, ...args: string[]) =>
    inNode(region, cmd, ...args).then(
      (r) => r.stdout.trim(),
      (e: Error) => `failed: ${e.message}`,
    );
  const nat = await out('iptables-save', '-t', 'nat');
  return [
    `from node-${region}: routes\n${await out('ip', 'route')}`,
    `NAT rules naming ${serviceIp}:\n${
      nat
        .split('\n')
        .filter((l) => l.includes(serviceIp))
        .join('\n') || '(none)'
    }`,
    `the pod ${podIp}:8080 directly: ${await out('timeout', '3', 'bash', '-c', `exec 3<>/dev/tcp/${podIp}/8080 && echo connected`)}`,
  ].join('\n');
}

describe.skipIf(skip)('the local cluster', () => {
  const kube = skip ? (undefined as unknown as Kube) : new Kube();
  const regions = skip ? [] : (clusterEnv().CLUSTER_REGIONS ?? '').split(' ');

  beforeAll(async () => {
    await kube.create('/api/v1/namespaces', { metadata: { name: NS } });
    await waitFor('default ServiceAccount', 30_000, () =>
      kube.call('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`).then((r) => r.status === 200),
    );
  });

  afterAll(async () => {
    if (!skip) await kube.delete(`/api/v1/namespaces/${NS}`);
  });

  it('has one Ready node per region, each with its own address and its region label', async () => {
    const nodes = await kube.list('/api/v1/nodes');
    expect(regions.length).toBeGreaterThanOrEqual(2);
    expect(nodes.map((n) => n.metadata.labels?.['topology.kubernetes.io/region']).sort()).toEqual(
      [...regions].sort(),
    );
    for (const n of nodes) {
      expect(n.status.conditions.find((c: { type: string }) => c.type === 'Ready').status).toBe('True');
      expect(n.spec.taints ?? []).toEqual([]);
    }
    const ips = nodes.map(
      (n) => n.status.addresses.find((a: { type: string }) => a.type === 'InternalIP').address,
    );
    expect(new Set(ips).size).toBe(nodes.length);
  });

  it('runs a pod per region on that region’s node, reachable through a Service and by DNS across nodes', async () => {
    const [a, b] = regions as [string, string];
    for (const [region, other] of [
      [a, b],
      [b, a],
    ] as const) {
      await kube.create(
        `/apis/apps/v1/namespaces/${NS}/deployments`,
        deployment(region, `http://web-${other}.${NS}.svc.cluster.local/`),
      );
      await kube.create(`/api/v1/namespaces/${NS}/services`, {
        metadata: { name: `web-${region}` },
        spec: { selector: { app: 'web', region }, ports: [{ port: 80, targetPort: 8080 }] },
      });
    }
    await kube.create(`/api/v1/namespaces/${NS}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const pods = await waitFor('a Ready pod per region', 120_000, async () => {
      const items = await kube.list(`/api/v1/namespaces/${NS}/pods`);
      return items.length === 2 && items.every(isReady) ? items : undefined;
    });
    const nodeOf = Object.fromEntries(
      pods.map((p: KubeObject) => [p.metadata.labels?.region, p.spec.nodeName]),
    );
    expect(nodeOf).toEqual({ [a]: `node-${a}`, [b]: `node-${b}` });

    const url = await forward('nodes-test', PORT, `${NS}/web-${a}:80`, b);
    const direct = await waitFor('the Service answers', 30_000, () =>
      fetch(`${url}/`).then((r) => (r.ok ? r.text() : undefined)),
    ).catch(async (error) => {
      const pod = pods.find((p: KubeObject) => p.metadata.labels?.region === a);
      const service = await kube.get(`/api/v1/namespaces/${NS}/services/web-${a}`);
      console.error(await pathFrom(b, service.spec.clusterIP, pod?.status?.podIP));
      throw error;
    });
    expect(direct).toMatch(new RegExp(`^web-${a}-\\S+ node-${a}$`));
    // From the pod of region a, by the DNS name of region b's Service: across the two nodes' namespaces.
    const peer = await waitFor('the peer answers', 30_000, () =>
      fetch(`${url}/peer`).then((r) => (r.ok ? r.text() : undefined)),
    );
    expect(peer).toMatch(new RegExp(`^web-${b}-\\S+ node-${b}$`));
    await script('forward.sh', 'stop', 'nodes-test');
  });
});

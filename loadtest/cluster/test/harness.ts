import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The running local cluster (loadtest/cluster/up.sh) as the tests see it: its API, its scripts. */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const IN_CI = process.env.CI === 'true';
export const CLUSTER_DIR = process.env.CLUSTER_DIR ?? join(ROOT, '.cache/cluster/run');
export const TOOLS_BIN = join(process.env.GATEHOUSE_TOOLS_DIR ?? join(ROOT, '.cache/tools'), 'bin');
export const run = promisify(execFile);

/** Why the cluster cannot start here, or undefined: not root, a tool or Debian package missing. */
export function missingPrerequisite(): string | undefined {
  if (process.getuid?.() !== 0)
    return 'the local cluster needs root (network namespaces, containerd, the kubelet)';
  for (const tool of [
    'etcd',
    'kube-apiserver',
    'kube-controller-manager',
    'kube-scheduler',
    'kubelet',
    'kube-proxy',
    'coredns',
    'helm',
    'kustomize',
  ])
    if (!existsSync(join(TOOLS_BIN, tool)))
      return `${TOOLS_BIN}/${tool} is missing: bash .ci/tools.sh control-plane node helm (kustomize: docs/deploy.md)`;
  for (const bin of [
    '/usr/bin/containerd',
    '/usr/sbin/runc',
    '/usr/bin/socat',
    '/usr/bin/buildah',
    '/usr/lib/cni/bridge',
    '/usr/bin/catatonit',
  ])
    if (!existsSync(bin))
      return `${bin} is missing: the Debian packages of .ci/run (containerd runc containernetworking-plugins catatonit buildah socat ...)`;
  return undefined;
}

/** The cluster's env file (written by up.sh once every node is Ready). */
export function clusterEnv(): Record<string, string> {
  const text = readFileSync(join(CLUSTER_DIR, 'env'), 'utf8');
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** Any JSON the API server sends: read by tests that know its kind. */
// biome-ignore lint/suspicious/noExplicitAny: objects of every kind, checked by the assertions that read them
export type Json = any;

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    uid?: string;
    [k: string]: unknown;
  };
  spec?: Json;
  status?: Json;
  [k: string]: unknown;
}

/** A small client of the cluster's API server (through the host relay), as the cluster admin. */
export class Kube {
  readonly #ca = readFileSync(join(CLUSTER_DIR, 'pki/ca.crt'));
  readonly #token = readFileSync(join(CLUSTER_DIR, 'pki/token'), 'utf8').trim();
  readonly #base = new URL(clusterEnv().CLUSTER_API ?? 'https://127.0.0.1:22502');

  call<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    contentType = method === 'PATCH' ? 'application/merge-patch+json' : undefined,
  ): Promise<{ status: number; body: T }> {
    return new Promise((done, fail) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        new URL(path, this.#base),
        {
          method,
          ca: this.#ca,
          headers: {
            authorization: `Bearer ${this.#token}`,
            accept: 'application/json',
            ...(data ? { 'content-type': contentType ?? 'application/json' } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () =>
            done({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }),
          );
        },
      );
      req.on('error', fail);
      req.end(data);
    });
  }

  async get<T = Json>(path: string): Promise<T> {
    const r = await this.call<T>('GET', path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async create(path: string, object: unknown): Promise<KubeObject> {
    const r = await this.call<KubeObject>('POST', path, object);
    if (r.status !== 201 && r.status !== 200)
      throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async delete(path: string): Promise<number> {
    return (await this.call('DELETE', path)).status;
  }

  async list(path: string): Promise<KubeObject[]> {
    return (await this.get<{ items: KubeObject[] }>(path)).items;
  }

  /** The REST path of an object of any kind the API server serves (its discovery, read once). */
  async pathOf(o: KubeObject): Promise<string> {
    this.#resources ??= this.#discover();
    const found = (await this.#resources).get(`${o.apiVersion}/${o.kind}`);
    if (!found) {
      this.#resources = undefined; // a CRD applied since: read the discovery again
      throw new Error(`the API server does not serve ${o.apiVersion} ${o.kind}`);
    }
    const prefix = o.apiVersion?.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
    const ns = found.namespaced ? `/namespaces/${o.metadata.namespace ?? 'default'}` : '';
    return `${prefix}${ns}/${found.plural}/${o.metadata.name}`;
  }

  /** Server-side apply, as `kubectl apply --server-side` does (the field manager owns what it sets). */
  async apply(o: KubeObject, fieldManager = 'kubectl'): Promise<KubeObject> {
    const path = `${await this.pathOf(o)}?fieldManager=${fieldManager}&force=true`;
    const r = await this.call<KubeObject>('PATCH', path, o, 'application/apply-patch+yaml');
    if (r.status !== 200 && r.status !== 201)
      throw new Error(`apply ${o.kind} ${o.metadata.name}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  #resources: Promise<Map<string, { plural: string; namespaced: boolean }>> | undefined;

  async #discover(): Promise<Map<string, { plural: string; namespaced: boolean }>> {
    const found = new Map<string, { plural: string; namespaced: boolean }>();
    const groupVersions = ['v1'];
    const groups = await this.get<{ groups: { versions: { groupVersion: string }[] }[] }>('/apis');
    for (const g of groups.groups) for (const v of g.versions) groupVersions.push(v.groupVersion);
    for (const gv of groupVersions) {
      const list = await this.get<{ resources: { name: string; kind: string; namespaced: boolean }[] }>(
        gv === 'v1' ? '/api/v1' : `/apis/${gv}`,
      );
      for (const r of list.resources)
        if (!r.name.includes('/')) found.set(`${gv}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
    }
    return found;
  }
}

/** Polls `check` every 250 ms until it returns a value other than undefined/false, or fails after `ms`. */
export async function waitFor<T>(
  what: string,
  ms: number,
  check: () => Promise<T | undefined | false>,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${last})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A pod's or a node's Ready condition is True. */
export const isReady = (o: KubeObject) =>
  (o.status?.conditions ?? []).some(
    (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
  );

/** `bash loadtest/cluster/<script> ...args`, its output on failure in the error. */
export async function script(name: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('bash', [join(ROOT, 'loadtest/cluster', name), ...args], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** A host port relayed to a Service (forward.sh); returns its base URL. */
export async function forward(name: string, port: number, target: string, region?: string): Promise<string> {
  await script('forward.sh', name, String(port), target, ...(region ? [region] : []));
  return `http://127.0.0.1:${port}`;
}

export async function helm(...args: string[]): Promise<string> {
  const { stdout } = await run(
    join(TOOLS_BIN, 'helm'),
    ['--kubeconfig', join(CLUSTER_DIR, 'kubeconfig'), ...args],
    {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    },
  );
  return stdout;
}

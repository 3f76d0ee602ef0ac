import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';

/**
 * A real Kubernetes control plane on 127.0.0.1 for one test file: etcd, kube-apiserver and
 * kube-controller-manager from .cache/tools/bin (built by `bash .ci/tools.sh control-plane`), the flags
 * of .ci/tools/smoke.sh. No scheduler, no kubelet: Pods stay Pending. Two identities: the admin
 * (system:masters) for the test's own requests, and the operator's service account, which has only the
 * rights config/rbac grants it.
 */
export const REPO = join(import.meta.dirname, '..', '..');
export const TOOLS_BIN = join(process.env.GATEHOUSE_TOOLS_DIR ?? join(REPO, '.cache', 'tools'), 'bin');
const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager'];
export const OPERATOR_USER = 'system:serviceaccount:gatehouse-system:gatehouse-operator';

export interface ControlPlane {
  server: string;
  /** A KubeConfig for the admin (default) or the operator's service account. */
  kubeConfig(who?: 'admin' | 'operator'): KubeConfig;
  startupMs: number;
  logs: string;
  stop(): Promise<void>;
}

/** Whether the binaries exist; outside CI a missing one skips loudly, with CI=true it fails. */
export function controlPlaneAvailable(): boolean {
  const missing = BINARIES.filter((b) => !existsSync(join(TOOLS_BIN, b)));
  if (!missing.length) return true;
  const message = `${missing.join(', ')} missing from ${TOOLS_BIN}: the operator's cluster tests cannot run (build them with: bash .ci/tools.sh control-plane).`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
  return false;
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((ok) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => ok(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
  return ports;
}

function makePki(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=gatehouse-test-ca',
  );
  ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'apiserver.key',
    '-out',
    'apiserver.csr',
    '-subj',
    '/CN=kube-apiserver',
  );
  writeFileSync(
    join(dir, 'ext.cnf'),
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'apiserver.crt',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
  ssl('genrsa', '-out', 'sa.key', '2048');
  ssl('rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
}

async function waitFor(what: string, ms: number, check: () => Promise<boolean>, procs: ChildProcess[]) {
  const until = Date.now() + ms;
  for (;;) {
    const dead = procs.find((p) => p.exitCode !== null);
    if (dead) throw new Error(`${what}: ${dead.spawnfile} exited with ${dead.exitCode}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Starts the three processes. `beforeControllers` runs once the apiserver answers and before
 * kube-controller-manager starts: CRDs installed there are known to its garbage collector from the
 * start (it discovers new kinds only every 30 s, which would delay the collection of an App's children).
 */
export async function startControlPlane(
  options: { beforeControllers?: (kubeConfig: KubeConfig) => Promise<void> } = {},
): Promise<ControlPlane> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cp-'));
  const pki = join(dir, 'pki');
  execFileSync('mkdir', ['-p', pki]);
  makePki(pki);
  const [etcdPort, peerPort, apiPort, kcmPort] = await freePorts(4);
  const server = `https://127.0.0.1:${apiPort}`;
  const tokens = { admin: randomBytes(24).toString('hex'), operator: randomBytes(24).toString('hex') };
  writeFileSync(
    join(pki, 'tokens.csv'),
    `${tokens.admin},gatehouse-admin,gatehouse-admin,"system:masters"\n` +
      `${tokens.operator},${OPERATOR_USER},gatehouse-operator-uid,"system:serviceaccounts,system:serviceaccounts:gatehouse-system"\n`,
  );
  const kubeConfig = (who: 'admin' | 'operator' = 'admin') => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'test', server, caFile: join(pki, 'ca.crt') }],
      users: [{ name: who, token: tokens[who] }],
      contexts: [{ name: who, cluster: 'test', user: who }],
      currentContext: who,
    });
    return kc;
  };
  writeFileSync(join(dir, 'kubeconfig'), kubeConfig('admin').exportConfig());

  const procs: ChildProcess[] = [];
  const run = (name: string, args: string[]) => {
    const log = openSync(join(dir, `${name}.log`), 'a');
    const child = spawn(join(TOOLS_BIN, name), args, { stdio: ['ignore', log, log] });
    closeSync(log);
    procs.push(child);
    return child;
  };
  const agent = new Agent({ connect: { ca: readFileSync(join(pki, 'ca.crt')) } });
  const get = async (url: string, token?: string) =>
    (
      await fetch(url, {
        dispatcher: agent,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(3000),
      })
    ).ok;
  const stop = async () => {
    for (const p of [...procs].reverse()) {
      if (p.exitCode !== null) continue;
      p.kill('SIGTERM');
      const exited = new Promise((ok) => p.once('exit', ok));
      const timeout = new Promise((ok) => setTimeout(ok, 5000));
      if ((await Promise.race([exited, timeout.then(() => 'timeout')])) === 'timeout') p.kill('SIGKILL');
    }
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run('etcd', [
      '--name=gatehouse-test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=gatehouse-test=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    await waitFor('etcd', 60_000, () => get(`http://127.0.0.1:${etcdPort}/health`), procs);
    run('kube-apiserver', [
      '--advertise-address=127.0.0.1',
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--authorization-mode=RBAC',
      '--endpoint-reconciler-type=none',
      `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(pki, 'apiserver.key')}`,
      `--client-ca-file=${join(pki, 'ca.crt')}`,
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
    ]);
    await waitFor('kube-apiserver /readyz', 180_000, () => get(`${server}/readyz`, tokens.admin), procs);
    await options.beforeControllers?.(kubeConfig('admin'));
    run('kube-controller-manager', [
      `--kubeconfig=${join(dir, 'kubeconfig')}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      '--leader-elect=false',
      `--service-account-private-key-file=${join(pki, 'sa.key')}`,
      `--root-ca-file=${join(pki, 'ca.crt')}`,
      '--cluster-name=gatehouse-test',
    ]);
    const insecure = new Agent({ connect: { rejectUnauthorized: false } });
    await waitFor(
      'kube-controller-manager /healthz',
      120_000,
      async () =>
        (
          await fetch(`https://127.0.0.1:${kcmPort}/healthz`, {
            dispatcher: insecure,
            signal: AbortSignal.timeout(3000),
          })
        ).ok,
      procs,
    );
    await insecure.close();
  } catch (err) {
    const tails = BINARIES.map((b) => {
      const f = join(dir, `${b}.log`);
      return existsSync(f)
        ? `---- ${b}.log\n${readFileSync(f, 'utf8').split('\n').slice(-25).join('\n')}`
        : '';
    }).join('\n');
    await stop();
    throw new Error(`${(err as Error).message}\n${tails}`);
  }
  return { server, kubeConfig, startupMs: Date.now() - started, logs: dir, stop };
}

/**
 * A real Kubernetes control plane on 127.0.0.1 for one test file, the one starter of every cluster test:
 * etcd, kube-apiserver and (unless `controllers: false`) kube-controller-manager from .cache/tools/bin,
 * with the flags of .ci/tools/smoke.sh (which follows controller-runtime's envtest). No scheduler, no
 * kubelet: Pods stay Pending. Two identities: the admin (system:masters) for the test's own requests,
 * and the operator's service account, which has only the rights config/rbac grants it.
 *
 * Users: operator/test (through cluster.ts, with the controllers: their garbage collector removes an
 * App's children) and charts/test and k8s/test (without: they create objects or dry-run them, through
 * `call` and helm with `kubeconfigFile`). It lives here because the operator owns the Kubernetes
 * knowledge of the repository and charts/k8s already depend on the operator (its CRD and RBAC); the
 * operator imports nothing from them.
 *
 * The binaries are the pinned versions built by `bash .ci/tools.sh control-plane` into TOOLS_BIN, never
 * from PATH: the flags below are those of that version. A missing one skips loudly outside CI and fails
 * with CI=true (controlPlaneAvailable).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';

export const REPO = join(import.meta.dirname, '..', '..');
export const TOOLS_BIN = join(process.env.GATEHOUSE_TOOLS_DIR ?? join(REPO, '.cache', 'tools'), 'bin');
export const OPERATOR_USER = 'system:serviceaccount:gatehouse-system:gatehouse-operator';

/** Who a request or kubeconfig speaks as: the admin (system:masters) or the operator's service account. */
export type Identity = 'admin' | 'operator';

export interface ControlPlaneOptions {
  /**
   * Also run kube-controller-manager (default true, what the operator's suites need: garbage collection
   * of an App's children, service-account tokens). Charts and manifests tests pass false.
   */
  controllers?: boolean;
}

export interface ApiResponse {
  status: number;
  /** The JSON body parsed, or the text when it is not JSON. */
  body: unknown;
  text: string;
}

export interface ControlPlane {
  /** The apiserver's base URL, https://127.0.0.1:<port> (a kubeconfig's `server`). */
  server: string;
  /**
   * A KubeConfig (@kubernetes/client-node) for the admin (default) or the operator's service account;
   * `server` points it elsewhere, e.g. at a proxy in front of the apiserver (the certificate names 127.0.0.1).
   */
  kubeConfig(who?: Identity, server?: string): KubeConfig;
  /** The path of a kubeconfig file for the admin, for command-line clients (helm, kube-controller-manager). */
  kubeconfigFile: string;
  /** One HTTPS request as the admin: a JSON body (or a string as it is) in, the status and body out. */
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<ApiResponse>;
  /**
   * This control plane's folder: pki/, etcd's data, `<binary>.log` of each process, the kubeconfig file;
   * tests may keep their own files there. stop() removes it.
   */
  work: string;
  /** How long startControlPlane took, PKI to the last health check. */
  startupMs: number;
  /**
   * Stops kube-apiserver (SIGTERM: it closes its connections, as in a rolling upgrade of the control
   * plane), waits `downMs`, starts it again with the same flags and waits for /readyz. etcd keeps the data.
   */
  restartApiserver(downMs?: number): Promise<void>;
  /** Ends the processes (SIGTERM, SIGKILL after 5 s) and removes `work`. Safe to call twice. */
  stop(): Promise<void>;
}

type Binary = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';

function binaries(options: ControlPlaneOptions): Binary[] {
  return options.controllers === false
    ? ['etcd', 'kube-apiserver']
    : ['etcd', 'kube-apiserver', 'kube-controller-manager'];
}

const missingBinaries = (options: ControlPlaneOptions) =>
  binaries(options).filter((b) => !existsSync(join(TOOLS_BIN, b)));

/**
 * Whether the binaries the options need exist. Outside CI a missing one skips loudly (the caller skips
 * its suite on false); with CI=true it throws. `suite` names the tests in the message.
 */
export function controlPlaneAvailable(options: ControlPlaneOptions & { suite?: string } = {}): boolean {
  const missing = missingBinaries(options);
  if (!missing.length) return true;
  const message = `${options.suite ?? 'cluster tests'}: ${missing.join(', ')} missing from ${TOOLS_BIN} (build them with: bash .ci/tools.sh ${binaries(options).join(' ')}).`;
  if (process.env.CI === 'true') throw new Error(`${message}\nCI=true: these tests must not be skipped.`);
  console.warn(`\n!!! SKIPPING ${message}\n!!! (with CI=true this fails)\n`);
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

/** A CA, the apiserver's serving certificate for 127.0.0.1, the service-account key pair. */
function makePki(dir: string) {
  const ssl = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
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

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;

function tail(file: string, lines = 30) {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n') : '';
}

/**
 * Starts the processes and waits until each is healthy. `beforeControllers` runs once the apiserver is
 * ready and before kube-controller-manager starts: CRDs installed there are known to its garbage
 * collector from the start (it discovers new kinds only every 30 s, which would delay the collection of
 * an App's children).
 */
export async function startControlPlane(
  options: ControlPlaneOptions & { beforeControllers?: (kubeConfig: KubeConfig) => Promise<void> } = {},
): Promise<ControlPlane> {
  const missing = missingBinaries(options);
  if (missing.length) throw new Error(`${missing.join(', ')} missing from ${TOOLS_BIN}`);
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'gatehouse-cp-'));
  const pki = join(work, 'pki');
  mkdirSync(pki);
  makePki(pki);
  const [etcdPort, peerPort, apiPort, kcmPort] = await freePorts(4);
  const server = `https://127.0.0.1:${apiPort}`;
  const tokens: Record<Identity, string> = {
    admin: randomBytes(24).toString('hex'),
    operator: randomBytes(24).toString('hex'),
  };
  writeFileSync(
    join(pki, 'tokens.csv'),
    `${tokens.admin},gatehouse-admin,gatehouse-admin,"system:masters"\n` +
      `${tokens.operator},${OPERATOR_USER},gatehouse-operator-uid,"system:serviceaccounts,system:serviceaccounts:gatehouse-system"\n`,
  );
  const kubeConfig = (who: Identity = 'admin', via = server) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'test', server: via, caFile: join(pki, 'ca.crt') }],
      users: [{ name: who, token: tokens[who] }],
      contexts: [{ name: who, cluster: 'test', user: who }],
      currentContext: who,
    });
    return kc;
  };
  const kubeconfigFile = join(work, 'kubeconfig');
  writeFileSync(kubeconfigFile, kubeConfig('admin').exportConfig(), { mode: 0o600 });

  const agent = new Agent({ connect: { ca: readFileSync(join(pki, 'ca.crt')) } });
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const res = await fetch(`${server}${path}`, {
      method,
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${tokens.admin}`,
        accept: 'application/json',
        ...(payload === undefined ? {} : { 'content-type': contentType }),
      },
      body: payload,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, text };
  };
  /** A health endpoint answers 2xx within 3 s. */
  const healthy = async (url: string, dispatcher = agent) =>
    (await fetch(url, { dispatcher, signal: AbortSignal.timeout(3000) })).ok;

  const procs: { name: Binary; child: ChildProcess; args: string[]; error?: Error }[] = [];
  const run = (name: Binary, args: string[]) => {
    const fd = openSync(join(work, `${name}.log`), 'a');
    const proc: (typeof procs)[number] = {
      name,
      args,
      child: spawn(join(TOOLS_BIN, name), args, { stdio: ['ignore', fd, fd] }),
    };
    closeSync(fd);
    proc.child.on('error', (err) => {
      proc.error = err;
    });
    procs.push(proc);
  };
  const waitFor = async (what: string, ms: number, check: () => Promise<boolean>) => {
    const until = Date.now() + ms;
    for (;;) {
      for (const p of procs) {
        if (p.error) throw new Error(`${what}: ${p.name} did not start: ${p.error.message}`);
        if (exited(p.child))
          throw new Error(`${what}: ${p.name} exited early (${p.child.exitCode ?? p.child.signalCode})`);
      }
      if (await check().catch(() => false)) return;
      if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      await sleep(200);
    }
  };
  const terminate = async (child: ChildProcess) => {
    if (exited(child)) return;
    const gone = new Promise((ok) => child.once('exit', ok)).then(() => true);
    child.kill('SIGTERM');
    if (!(await Promise.race([gone, sleep(5000).then(() => false)]))) {
      child.kill('SIGKILL');
      await Promise.race([gone, sleep(5000)]);
    }
  };
  const restartApiserver = async (downMs = 0) => {
    const index = procs.findIndex((p) => p.name === 'kube-apiserver');
    const proc = procs[index];
    if (!proc) throw new Error('no kube-apiserver to restart');
    await terminate(proc.child);
    procs.splice(index, 1);
    await sleep(downMs);
    run('kube-apiserver', proc.args);
    await waitFor(
      'kube-apiserver /readyz after a restart',
      180_000,
      async () => (await call('GET', '/readyz')).status === 200,
    );
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const { child } of [...procs].reverse()) await terminate(child);
      await agent.close();
      rmSync(work, { recursive: true, force: true });
    })());

  try {
    run('etcd', [
      '--name=gatehouse-test',
      `--data-dir=${join(work, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=gatehouse-test=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    await waitFor('etcd /health', 60_000, () => healthy(`http://127.0.0.1:${etcdPort}/health`));
    run('kube-apiserver', [
      '--advertise-address=127.0.0.1',
      // 1.37 refuses a loopback advertise address for the endpoint reconciler; no Service needs it here.
      '--endpoint-reconciler-type=none',
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      // Room for the Services of a large fleet (loadtest/bench/operator-scale.ts: 9 per App of 3 regions).
      '--service-cluster-ip-range=10.0.0.0/16',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--authorization-mode=RBAC',
      `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(pki, 'apiserver.key')}`,
      `--client-ca-file=${join(pki, 'ca.crt')}`,
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      `--cert-dir=${join(work, 'apiserver-certs')}`,
    ]);
    await waitFor(
      'kube-apiserver /readyz',
      180_000,
      async () => (await call('GET', '/readyz')).status === 200,
    );
    await options.beforeControllers?.(kubeConfig('admin'));
    if (options.controllers !== false) {
      run('kube-controller-manager', [
        `--kubeconfig=${kubeconfigFile}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${kcmPort}`,
        '--leader-elect=false',
        `--service-account-private-key-file=${join(pki, 'sa.key')}`,
        `--root-ca-file=${join(pki, 'ca.crt')}`,
        '--cluster-name=gatehouse-test',
      ]);
      // Its serving certificate is self-signed, made at start.
      const insecure = new Agent({ connect: { rejectUnauthorized: false } });
      try {
        await waitFor('kube-controller-manager /healthz', 120_000, () =>
          healthy(`https://127.0.0.1:${kcmPort}/healthz`, insecure),
        );
      } finally {
        await insecure.close();
      }
    }
  } catch (err) {
    const tails = procs.map((p) => `---- ${p.name}.log\n${tail(join(work, `${p.name}.log`))}`).join('\n');
    await stop();
    throw new Error(`${(err as Error).message}\n${tails}`);
  }
  return {
    server,
    kubeConfig,
    kubeconfigFile,
    call,
    work,
    startupMs: Date.now() - started,
    restartApiserver,
    stop,
  };
}

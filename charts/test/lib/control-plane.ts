/**
 * A real etcd + kube-apiserver on 127.0.0.1 for the chart and manifest tests (the flags of
 * .ci/tools/smoke.sh, which follows controller-runtime's envtest), and a small REST client for it.
 * No kube-controller-manager: the tests create objects for real or dry-run them; no Pod ever starts.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTool } from './tools.ts';

export interface ApiResponse {
  status: number;
  body: unknown;
  text: string;
}

export interface ControlPlane {
  url: string;
  work: string;
  /** A kubeconfig file for helm and other clients (admin token, the test CA). */
  kubeconfig: string;
  /** HTTPS request with the admin token; JSON in and out. */
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<ApiResponse>;
  stop(): Promise<void>;
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

function openssl(cwd: string, ...args: string[]) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, the apiserver's serving certificate for 127.0.0.1, the service-account key pair, a token. */
function makePki(dir: string) {
  openssl(
    dir,
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
  openssl(
    dir,
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
  openssl(
    dir,
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
  openssl(dir, 'genrsa', '-out', 'sa.key', '2048');
  openssl(dir, 'rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
  const token = execFileSync('openssl', ['rand', '-hex', '24'], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'tokens.csv'), `${token},gatehouse-admin,gatehouse-admin,"system:masters"\n`);
  return { token, ca: readFileSync(join(dir, 'ca.crt')) };
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

async function waitFor(what: string, seconds: number, check: () => Promise<boolean>, alive: () => void) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    alive();
    if (await check().catch(() => false)) return;
    await sleep(300);
  }
  throw new Error(`timed out after ${seconds} s waiting for ${what}`);
}

function tail(path: string, lines = 30) {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Starts etcd and kube-apiserver; stop() ends both (SIGTERM, then SIGKILL) and removes the work folder. */
export async function startControlPlane(): Promise<ControlPlane> {
  const etcdBin = findTool('etcd');
  const apiBin = findTool('kube-apiserver');
  if (!etcdBin || !apiBin) throw new Error('etcd and kube-apiserver are needed');
  const work = mkdtempSync(join(tmpdir(), 'gatehouse-chart-'));
  const pki = join(work, 'pki');
  execFileSync('mkdir', ['-p', pki]);
  const { token, ca } = makePki(pki);
  const [etcdPort, peerPort, apiPort] = await freePorts(3);
  const children: { name: string; child: ChildProcess; log: string }[] = [];
  const start = (name: string, bin: string, args: string[]) => {
    const log = join(work, `${name}.log`);
    const fd = openSync(log, 'a');
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd] });
    children.push({ name, child, log });
    return child;
  };
  const alive = () => {
    for (const c of children) {
      if (c.child.exitCode !== null || c.child.signalCode !== null) {
        throw new Error(
          `${c.name} exited early (${c.child.exitCode ?? c.child.signalCode}):\n${tail(c.log)}`,
        );
      }
    }
  };
  const stop = async () => {
    for (const c of [...children].reverse()) {
      if (c.child.exitCode !== null || c.child.signalCode !== null) continue;
      const exited = new Promise((ok) => c.child.once('exit', ok));
      c.child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    }
    rmSync(work, { recursive: true, force: true });
  };
  const url = `https://127.0.0.1:${apiPort}`;
  const call = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
    new Promise<ApiResponse>((ok, fail) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const req = request(
        `${url}${path}`,
        {
          method,
          ca,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {}),
          },
          timeout: 60_000,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {}
            ok({ status: res.statusCode ?? 0, body: parsed, text });
          });
        },
      );
      req.on('error', fail);
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.end(payload);
    });
  try {
    start('etcd', etcdBin, [
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
    await waitFor(
      'etcd /health',
      60,
      async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok,
      alive,
    );
    start('kube-apiserver', apiBin, [
      '--advertise-address=127.0.0.1',
      // 1.37 refuses a loopback advertise address for the endpoint reconciler; no Service needs it here.
      '--endpoint-reconciler-type=none',
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--authorization-mode=RBAC',
      `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(pki, 'apiserver.key')}`,
      `--client-ca-file=${join(pki, 'ca.crt')}`,
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      `--service-account-issuer=${url}`,
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      `--cert-dir=${join(work, 'apiserver-certs')}`,
    ]);
    await waitFor(
      'kube-apiserver /readyz',
      180,
      async () => (await call('GET', '/readyz')).status === 200,
      alive,
    );
  } catch (error) {
    const logs = children.map((c) => `---- ${c.name}\n${tail(c.log)}`).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${logs}`);
  }
  const kubeconfig = join(work, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority': join(pki, 'ca.crt') } }],
      users: [{ name: 'admin', user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'admin' } }],
      'current-context': 'test',
    }),
    { mode: 0o600 },
  );
  return { url, work, kubeconfig, call, stop };
}

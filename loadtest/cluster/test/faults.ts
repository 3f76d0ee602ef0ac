import { spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_DIR, clusterEnv, run } from './harness.ts';

/**
 * Faults a drill puts on one node of the local cluster, always inside that node's network namespace
 * (gh-<region>) or on its own processes, never on the host: each has its undo, which the drills call in
 * `finally` and again in afterAll (both idempotent), so a failed drill leaves the node as it found it.
 */

const netns = (region: string) => `--net=/run/netns/gh-${region}`;
/** Runs a command in a node's network namespace. */
export const inNode = (region: string, cmd: string, ...args: string[]) =>
  run('nsenter', [netns(region), cmd, ...args]);

/**
 * The node's pods' connections to the database: the host's PostgreSQL as the pods reach it, through the
 * hub at CLUSTER_DATABASE_HOST. Forwarded traffic of the node's pod bridge, so FORWARD in the node's
 * namespace; tcp-reset, so pooled connections fail at their next packet instead of hanging.
 */
function databaseRule(): string[] {
  const [host, port] = (clusterEnv().CLUSTER_DATABASE_HOST ?? '172.31.250.1:5432').split(':') as [
    string,
    string,
  ];
  return [
    'FORWARD',
    '-d',
    `${host}/32`,
    '-p',
    'tcp',
    '--dport',
    port,
    '-m',
    'comment',
    '--comment',
    'gatehouse drill: database cut',
    '-j',
    'REJECT',
    '--reject-with',
    'tcp-reset',
  ];
}

/** Cuts every pod of the region's node off the database (first rule of FORWARD, before kube-proxy's). */
export async function cutDatabase(region: string): Promise<void> {
  const [chain, ...rule] = databaseRule();
  await inNode(region, 'iptables', '-w', '5', '-I', chain as string, '1', ...rule);
}

/** Removes every copy of the cut; true when there was one. */
export async function restoreDatabase(region: string): Promise<boolean> {
  const rule = databaseRule();
  let removed = false;
  for (;;) {
    const present = await inNode(region, 'iptables', '-w', '5', '-C', ...rule).then(
      () => true,
      () => false,
    );
    if (!present) return removed;
    await inNode(region, 'iptables', '-w', '5', '-D', ...rule);
    removed = true;
  }
}

const kubeletPidFile = (region: string) => join(CLUSTER_DIR, 'pids', `kubelet-${region}`);
/** The kubelet's command lines as they ran, by region, while it is stopped. */
const stopped = new Map<string, string[]>();

/**
 * Kills the node's kubelet (SIGKILL: a lost node says no goodbye). Its containers keep running under
 * containerd, and kube-proxy keeps the node's Service rules: what stops is the node's heartbeat and any
 * change to its pods.
 */
export async function stopKubelet(region: string): Promise<void> {
  const pid = Number(readFileSync(kubeletPidFile(region), 'utf8').trim());
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  if (!argv[0]?.endsWith('kubelet')) throw new Error(`pid ${pid} is not the kubelet: ${argv.join(' ')}`);
  stopped.set(region, argv);
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the kubelet of ${region} (pid ${pid}) did not exit`);
}

/**
 * Starts the kubelet again with the command line it had, in its own session like up.sh's, its pid where
 * down.sh looks for it, its output appended to its log. No-op when it was not stopped here.
 */
export function startKubelet(region: string): boolean {
  const argv = stopped.get(region);
  if (!argv) return false;
  const log = openSync(join(CLUSTER_DIR, 'logs', `kubelet-${region}.log`), 'a');
  const child = spawn('nsenter', [netns(region), ...argv], { detached: true, stdio: ['ignore', log, log] });
  if (!child.pid) throw new Error(`the kubelet of ${region} did not start again`);
  writeFileSync(kubeletPidFile(region), `${child.pid}\n`);
  child.unref();
  stopped.delete(region);
  return true;
}

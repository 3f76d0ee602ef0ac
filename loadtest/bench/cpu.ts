import { readdirSync, readFileSync } from 'node:fs';
import { descendantsOf } from './memory.ts';

/** CPU time in microseconds, read from /proc (Linux); null where /proc is absent. */
export interface CpuSnapshot {
  /** The server child under load, with its own child processes (image renderers). */
  server: number | null;
  /** The server child alone: what its event loop and threads spent, its renderers left out. */
  serverOwn: number | null;
  /** The PostgreSQL backends serving the bench database (their title names it); null when not asked. */
  postgres: number | null;
  /** Every `redis-server` process on this machine; null when not asked. */
  redis: number | null;
  /** This process: the load generator. */
  loadgen: number;
  /** The whole machine: busy and total jiffies from /proc/stat. */
  machine: { busy: number; total: number } | null;
}

const TICK_US = 10_000; // USER_HZ is 100 on Linux.

function statOf(pid: string): { comm: string; us: number; reapedUs: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // After the command: state is field 3, utime field 14, stime field 15, and the reaped children's
    // cutime and cstime fields 16 and 17 (1-based in proc(5)).
    return {
      comm,
      us: (Number(fields[11]) + Number(fields[12])) * TICK_US,
      reapedUs: (Number(fields[13]) + Number(fields[14])) * TICK_US,
    };
  } catch {
    return null;
  }
}

/**
 * The server's CPU with its own child processes (the API's image renderers): live ones read directly,
 * exited ones through the parent's reaped-children times. Drawing moved out of the API process; its cost
 * must not leave the API's figure with it.
 */
function serverCpu(pid: number): { withChildren: number; own: number } | null {
  const own = statOf(String(pid));
  if (!own) return null;
  let total = own.us + own.reapedUs;
  for (const child of descendantsOf(pid)) {
    const stat = statOf(String(child));
    if (stat) total += stat.us + stat.reapedUs;
  }
  return { withChildren: total, own: own.us };
}

/** Sums the CPU time of the processes named `comm` whose command line contains `marker`, if given. */
function sumByCommand(comm: string, marker?: string): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  let total = 0;
  for (const pid of pids) {
    const stat = statOf(pid);
    if (stat?.comm !== comm) continue;
    if (marker) {
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
      } catch {
        continue;
      }
    }
    total += stat.us;
  }
  return total;
}

function machine(): CpuSnapshot['machine'] {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [, ...values] = line.trim().split(/\s+/);
    const n = values.map(Number);
    const idle = (n[3] ?? 0) + (n[4] ?? 0);
    const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** What else to account for: the PostgreSQL database the server uses, and Redis. */
export interface Parties {
  postgresDatabase?: string | undefined;
  redis?: boolean | undefined;
}

export function snapshot(serverPid: number, parties: Parties = {}): CpuSnapshot {
  const self = process.cpuUsage();
  const server = serverCpu(serverPid);
  return {
    server: server?.withChildren ?? null,
    serverOwn: server?.own ?? null,
    // Backend titles read "postgres: <user> <database> <host>(<port>) <state>".
    postgres: parties.postgresDatabase ? sumByCommand('postgres', ` ${parties.postgresDatabase} `) : null,
    redis: parties.redis ? sumByCommand('redis-server') : null,
    loadgen: self.user + self.system,
    machine: machine(),
  };
}

/** CPU microseconds per request for each party, and the machine's busy share. */
export interface CpuPerRequest {
  server: number | null;
  /** The server process without its renderers; absent from reports of older benches. */
  serverOwn?: number | null;
  postgres: number | null;
  redis: number | null;
  loadgen: number | null;
  machineBusy: number | null;
}

/** CPU microseconds per request for each party between two snapshots, and the machine's busy share. */
export function perRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuPerRequest {
  const per = (a: number | null, b: number | null) =>
    a === null || b === null || requests === 0 ? null : Math.round((b - a) / requests);
  return {
    server: per(before.server, after.server),
    serverOwn: per(before.serverOwn, after.serverOwn),
    postgres: per(before.postgres, after.postgres),
    redis: per(before.redis, after.redis),
    loadgen: per(before.loadgen, after.loadgen),
    machineBusy:
      before.machine && after.machine
        ? (after.machine.busy - before.machine.busy) / Math.max(1, after.machine.total - before.machine.total)
        : null,
  };
}

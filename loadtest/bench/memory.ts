import { readdirSync, readFileSync } from 'node:fs';

/**
 * Resident memory of the server child over a measured run, in MiB; null where /proc is absent. The child's
 * own processes (the image renderers it forks, api/src/challenges/image-pool.ts) are a separate figure:
 * `peakMiB` is the API process alone, the figure the memory bound holds (≤ 150 MiB per API process).
 */
export interface RssSummary {
  beforeMiB: number | null;
  peakMiB: number | null;
  afterMiB: number | null;
  /** The peak of the server's descendants' RSS, summed at each sample; null when it had none. */
  childrenPeakMiB?: number | null;
  /** The peak of the server's RSS plus its descendants', at the same sample. */
  totalPeakMiB?: number | null;
}

/** VmRSS of `pid` from /proc/<pid>/status (kB there), in MiB. */
export function rssMiB(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    const kB = Number(line?.split(/\s+/)[1]);
    return Number.isFinite(kB) ? Math.round((kB / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/** The pids of a process's children and theirs (every thread's list in /proc); [] where /proc is absent. */
export function descendantsOf(pid: number): number[] {
  let children: number[];
  try {
    children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/** The summed RSS of `pid`'s descendants, in MiB; null when it has none. */
function descendantsMiB(pid: number): number | null {
  const sizes = descendantsOf(pid)
    .map(rssMiB)
    .filter((s): s is number => s !== null);
  return sizes.length ? Math.round(sizes.reduce((a, b) => a + b, 0) * 10) / 10 : null;
}

/**
 * Samples the RSS of `pid` (and of its descendants, apart) every `everyMs` from now until `stop()`. A timer
 * in the load generator's process is good enough: autocannon yields to the event loop between responses,
 * and a sample costs a few small reads.
 */
export function sampleRss(pid: number, everyMs = 100): { stop(): RssSummary } {
  const beforeMiB = rssMiB(pid);
  let peakMiB = beforeMiB;
  let childrenPeakMiB: number | null = null;
  let totalPeakMiB: number | null = null;
  const max = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
  const take = () => {
    const now = rssMiB(pid);
    const children = descendantsMiB(pid);
    peakMiB = max(peakMiB, now);
    childrenPeakMiB = max(childrenPeakMiB, children);
    if (now !== null) totalPeakMiB = max(totalPeakMiB, now + (children ?? 0));
    return now;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const afterMiB = take();
      return { beforeMiB, peakMiB, afterMiB, childrenPeakMiB, totalPeakMiB };
    },
  };
}

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps: RSS in MiB per mapping name (a file's base
 * name, `[heap]` for malloc's main arena, `[anon]` for anonymous mappings: V8's heap pages, thread arenas,
 * large allocations, stacks), largest first, plus the process's PSS and its shared file-backed pages
 * (the node binary's text is shared with every other process running it). Null where /proc is absent.
 */
export function memoryMap(
  pid: number,
): { rows: [string, number][]; pssMiB: number; sharedCleanMiB: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const rows = new Map<string, number>();
  let name = '[anon]';
  let pss = 0;
  let shared = 0;
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1]!.trim();
      name = path === '' ? '[anon]' : path.startsWith('[') ? path.replace(/:.*/, '') : path.split('/').pop()!;
      continue;
    }
    const field = /^(Rss|Pss|Shared_Clean):\s+(\d+) kB/.exec(line);
    if (!field) continue;
    const kB = Number(field[2]);
    if (field[1] === 'Rss') rows.set(name, (rows.get(name) ?? 0) + kB / 1024);
    else if (field[1] === 'Pss') pss += kB / 1024;
    else shared += kB / 1024;
  }
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    rows: [...rows].map(([n, v]): [string, number] => [n, round(v)]).sort((a, b) => b[1] - a[1]),
    pssMiB: round(pss),
    sharedCleanMiB: round(shared),
  };
}
